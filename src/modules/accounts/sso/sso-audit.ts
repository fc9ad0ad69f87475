// Sign-ins through single sign-on as audit records (the audit module's log, when the service has
// one): `auth.sso_login` in the person's account, with the person as the actor; a refused one,
// `auth.sso_login_failed`, in the platform owner's account (a refused person may belong to no
// account here), with what is known of them and why they were refused — never a token or secret.
import type { Logger } from 'pino';
import type { AuditLog } from '../../audit/audit-log.js';
import type { AuditEntry } from '../../audit/audit-record.js';

/** What the audit log is told of sign-ins (the audit module's, when there is one). */
export interface SsoAuditSink {
  signedIn(event: SsoAuditEvent): Promise<void> | void;
  refused(event: SsoAuditEvent & { code: string; reason: string }): Promise<void> | void;
}

export interface SsoAuditEvent {
  accountId: string | null;
  /** The scopes the session got (a refusal: none). */
  scopes: readonly string[];
  userId: string | null;
  subject: string | null;
  email: string | null;
  sessionId: string | null;
  ip: string;
}

export function ssoAuditSink(
  log: Pick<AuditLog, 'record'>,
  ownerAccountId: () => Promise<string | null>,
  logger: Logger,
): SsoAuditSink {
  return {
    async signedIn(event: SsoAuditEvent) {
      if (event.accountId === null) return;
      const entry: AuditEntry = {
        accountId: event.accountId,
        actor: { kind: 'user', keyId: null, sessionId: event.sessionId, user: event.userId },
        action: 'auth.sso_login',
        target: { type: 'sso_user', id: event.userId },
        changes: {
          before: null,
          after: { subject: event.subject, email: event.email, scopes: event.scopes },
        },
        ip: event.ip,
      };
      // Awaited: a sign-in the log could not record opens no session (the error is answered).
      await log.record(entry);
    },
    async refused(event) {
      try {
        const accountId = await ownerAccountId();
        if (accountId === null) return;
        const known = event.subject !== null;
        await log.record({
          accountId,
          actor: {
            kind: known ? 'user' : 'anonymous',
            keyId: null,
            sessionId: null,
            user: known ? event.subject : null,
          },
          action: 'auth.sso_login_failed',
          target: { type: 'sso_user', id: null },
          changes: {
            before: null,
            after: { reason: event.code, message: event.reason, email: event.email },
          },
          ip: event.ip,
        });
      } catch (error) {
        // The refusal is answered whatever happens to its record.
        logger.warn({ err: error }, 'could not record a refused single sign-on in the audit log');
      }
    },
  };
}
