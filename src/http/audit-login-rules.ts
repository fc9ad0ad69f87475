// The dashboard's logins, failed logins and logouts as audit records. A failed login is recorded
// in the account of the key it presented when that key exists (revoked, expired, refused
// address), else in the platform owner's account with no actor; the presented key never is.
// Attempts the login throttle refused (429) and malformed bodies (400) are not recorded: they
// checked no key, and recording them would let anyone grow the log at will.
import {
  bodyField,
  member,
  succeeded,
  text,
  type AuditRule,
  type RuleRecord,
} from './audit-rule.js';

/** The statuses of a key that was checked and refused. */
const refusals = new Set([401, 403]);

const login: AuditRule = {
  async records(context): Promise<RuleRecord[]> {
    const answer = context.answer();
    if (succeeded(context)) {
      const accountId = text(member(member(answer, 'account'), 'id'));
      const keyId = text(member(member(answer, 'key'), 'id'));
      const sessionId = text(member(member(answer, 'session'), 'id'));
      if (accountId === null || keyId === null) return [];
      const user = (await context.services.userOfKey?.(keyId)) ?? null;
      return [
        {
          accountId,
          actor: { kind: user === null ? 'key' : 'user', keyId, sessionId: null, user },
          action: 'auth.login',
          target: { type: 'session', id: sessionId },
          changes: null,
        },
      ];
    }
    if (!refusals.has(context.status)) return [];
    const presented = text(bodyField(context.request, 'api_key'));
    const owner = presented === null ? undefined : await context.services.keyOwner(presented);
    const accountId = owner?.accountId ?? (await context.services.ownerAccountId());
    if (accountId === null) return [];
    const reason = text(member(member(answer, 'error'), 'code')) ?? `http_${context.status}`;
    return [
      {
        accountId,
        actor:
          owner === undefined
            ? { kind: 'anonymous', keyId: null, sessionId: null, user: null }
            : { kind: 'key', keyId: owner.keyId, sessionId: null, user: null },
        action: 'auth.login_failed',
        target: { type: 'session', id: null },
        changes: { before: null, after: { reason } },
      },
    ];
  },
};

const logout: AuditRule = {
  records(context) {
    const sessionId = context.principal?.sessionId;
    const ended = member(context.answer(), 'session_ended') === true;
    if (!succeeded(context) || !ended || sessionId === undefined) return Promise.resolve([]);
    return Promise.resolve([
      { action: 'auth.logout', target: { type: 'session', id: sessionId }, changes: null },
    ]);
  },
};

export const loginRules: ReadonlyArray<readonly [string, AuditRule]> = [
  ['POST /v1/auth/login', login],
  ['POST /v1/auth/logout', logout],
];
