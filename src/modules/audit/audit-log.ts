// The audit log: appends a record to its account's hash chain, lists records, and deletes those
// past the retention period without breaking the chain (its base moves with them).
import { newId } from '../../ids.js';
import { boundedChangesText } from './audit-changes.js';
import {
  genesisHash,
  recordHash,
  type AuditActor,
  type AuditEntry,
  type AuditRecord,
} from './audit-record.js';
import type { AuditFilter, AuditRepository, AuditRow } from './audit.repository.js';

/** Longest text kept of a free-form field (a user name, an address): past it, cut. */
function bounded(value: string | null, length: number): string | null {
  return value === null ? null : value.slice(0, length);
}

export function recordOf(row: AuditRow): AuditRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    seq: row.seq,
    at: row.at,
    actor: {
      kind: row.actor_kind as AuditActor['kind'],
      keyId: row.actor_key_id,
      sessionId: row.actor_session_id,
      user: row.actor_user,
    },
    action: row.action,
    target: { type: row.target_type, id: row.target_id },
    changes: row.changes,
    ip: row.ip,
    prevHash: row.prev_hash,
    hash: row.hash,
  };
}

function rowOf(record: AuditRecord): AuditRow {
  return {
    id: record.id,
    account_id: record.accountId,
    seq: record.seq,
    at: record.at,
    actor_kind: record.actor.kind,
    actor_key_id: record.actor.keyId,
    actor_session_id: record.actor.sessionId,
    actor_user: record.actor.user,
    action: record.action,
    target_type: record.target.type,
    target_id: record.target.id,
    changes: record.changes,
    ip: record.ip,
    prev_hash: record.prevHash,
    hash: record.hash,
  };
}

export interface AuditLogOptions {
  readonly repository: AuditRepository;
  readonly now: () => number;
}

export class AuditLog {
  constructor(private readonly options: AuditLogOptions) {}

  /**
   * Appends `entry` to its account's chain and answers the stored record. The record's time is
   * taken under the chain's lock, so an account's records are in time order as well as seq order.
   */
  async record(entry: AuditEntry): Promise<AuditRecord> {
    const changes = boundedChangesText(entry.changes);
    const actor: AuditActor = {
      kind: entry.actor.kind,
      keyId: bounded(entry.actor.keyId, 64),
      sessionId: bounded(entry.actor.sessionId, 64),
      user: bounded(entry.actor.user, 256),
    };
    const id = newId('aud');
    const row = await this.options.repository.append(entry.accountId, (head) => {
      const unhashed = {
        id,
        accountId: entry.accountId,
        seq: head.seq + 1,
        at: new Date(this.options.now()).toISOString(),
        actor,
        action: entry.action,
        target: { type: entry.target.type, id: bounded(entry.target.id, 128) },
        changes,
        ip: bounded(entry.ip, 64),
        prevHash: head.hash,
      };
      return rowOf({ ...unhashed, hash: recordHash(unhashed) });
    });
    return recordOf(row);
  }

  /** A page of records, newest first. */
  async list(filter: AuditFilter, page: { limit: number; offset: number }) {
    const { rows, total } = await this.options.repository.list(filter, page);
    return { records: rows.map(recordOf), total };
  }

  /**
   * Deletes every account's records older than `retentionDays` (from the start of each chain),
   * keeping each chain verifiable from its new base. Answers how many were deleted.
   */
  async prune(retentionDays: number): Promise<number> {
    const cutoff = new Date(this.options.now() - retentionDays * 86_400_000).toISOString();
    let deleted = 0;
    for (const accountId of await this.options.repository.accountsWithRecordsBefore(cutoff)) {
      deleted += await this.options.repository.prune(accountId, cutoff);
    }
    return deleted;
  }
}

export { genesisHash };
