// An audit record as the domain sees it, and its hash. The hash is the SHA-256
// of a JSON array of every field in a fixed order, the previous record's hash last: changing any
// field of a stored record (or the order of records) changes the hash the next record names.
import { createHash } from 'node:crypto';

/** The `prev_hash` of an account's first record. */
export const genesisHash = '0'.repeat(64);

/** Who made a change: a key, a dashboard session (opened with a key), an SSO user, or the system. */
export type ActorKind = 'key' | 'session' | 'user' | 'system' | 'anonymous';

export interface AuditActor {
  readonly kind: ActorKind;
  /** The key of the request (also for a session opened with it); null for SSO users and the system. */
  readonly keyId: string | null;
  /** The dashboard session the request came with. */
  readonly sessionId: string | null;
  /** The single-sign-on user (their `sub` at the identity provider, or the platform's user id). */
  readonly user: string | null;
}

/** The service itself, or its operator at the command line (`npm run keys`): no key, no session. */
export const systemActor: AuditActor = { kind: 'system', keyId: null, sessionId: null, user: null };

/** `{before, after}` of the changed fields: null before for a creation, null after for a deletion. */
export interface AuditChanges {
  readonly before: Readonly<Record<string, unknown>> | null;
  readonly after: Readonly<Record<string, unknown>> | null;
}

/** What a caller records: the chain fields (id, seq, time, hashes) are the log's to assign. */
export interface AuditEntry {
  readonly accountId: string;
  readonly actor: AuditActor;
  /** `<target type>.<verb>`, e.g. `api_key.create`, `auth.login_failed` (docs/audit.md lists them). */
  readonly action: string;
  readonly target: { readonly type: string; readonly id: string | null };
  readonly changes: AuditChanges | null;
  /** The client's address (the request's, behind TRUST_PROXY). */
  readonly ip: string | null;
}

/** A stored record: every field as hashed (`changes` as its canonical JSON text). */
export interface AuditRecord {
  readonly id: string;
  readonly accountId: string;
  readonly seq: number;
  readonly at: string;
  readonly actor: AuditActor;
  readonly action: string;
  readonly target: { readonly type: string; readonly id: string | null };
  readonly changes: string | null;
  readonly ip: string | null;
  readonly prevHash: string;
  readonly hash: string;
}

/** Version tag of the hashed form: a later change of it can be told from tampering. */
const hashedFormVersion = 'audit-v1';

/** The hash a record must carry: over all its fields but `hash`, `prevHash` included. */
export function recordHash(record: Omit<AuditRecord, 'hash'>): string {
  const fields = [
    hashedFormVersion,
    record.id,
    record.accountId,
    record.seq,
    record.at,
    record.actor.kind,
    record.actor.keyId,
    record.actor.sessionId,
    record.actor.user,
    record.action,
    record.target.type,
    record.target.id,
    record.changes,
    record.ip,
    record.prevHash,
  ];
  return createHash('sha256').update(JSON.stringify(fields)).digest('hex');
}

/** A well-formed action name: `<target type>.<verb>`, lower case. */
export const actionPattern = '^[a-z][a-z_]{0,31}\\.[a-z][a-z_]{0,30}$';

/** A well-formed target type. */
export const targetTypePattern = '^[a-z][a-z_]{0,63}$';
