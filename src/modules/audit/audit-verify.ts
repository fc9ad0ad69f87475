// Verification of the chains: each account's records are walked in seq order from the chain's
// base; the first record whose hash is not its content's, whose seq is not the next one, or whose
// prev_hash is not the hash before it is named, and so is a chain whose head says more records
// were written than remain (records deleted at the end).
import { recordOf } from './audit-log.js';
import { recordHash, type AuditRecord } from './audit-record.js';
import type { AuditRepository } from './audit.repository.js';

export type BreakReason =
  | 'hash_mismatch'
  | 'broken_link'
  | 'seq_gap'
  | 'missing_head'
  | 'head_mismatch';

export interface ChainBreak {
  readonly accountId: string;
  /** The record found broken; null when records at the end are missing (see `reason`). */
  readonly recordId: string | null;
  readonly seq: number | null;
  readonly reason: BreakReason;
  readonly message: string;
}

export interface ChainSummary {
  readonly accountId: string;
  /** Records walked (those retention left). */
  readonly records: number;
  readonly firstSeq: number | null;
  readonly lastSeq: number;
  /** The head's hash: kept somewhere else, it shows later whether this chain was rewritten. */
  readonly lastHash: string;
}

export type ChainReport = { ok: true; chain: ChainSummary } | { ok: false; broken: ChainBreak };

const batchSize = 500;

/** Where a walk is: the seq and hash the next record must carry, and the record before it. */
interface WalkState {
  expectedSeq: number;
  previousHash: string;
  previousId: string | null;
}

/** The first thing wrong with `record` at this point of its chain, or null. */
function checkRecord(record: AuditRecord, state: WalkState): Omit<ChainBreak, 'accountId'> | null {
  const at = { recordId: record.id, seq: record.seq };
  if (recordHash(record) !== record.hash) {
    return {
      ...at,
      reason: 'hash_mismatch',
      message: `Record ${record.id} (seq ${record.seq}) does not hash to its stored hash: it was changed after it was written.`,
    };
  }
  if (record.seq !== state.expectedSeq) {
    const what =
      record.seq > state.expectedSeq
        ? `the record${record.seq - state.expectedSeq > 1 ? 's' : ''} with seq ${state.expectedSeq}${record.seq - state.expectedSeq > 1 ? `–${record.seq - 1}` : ''} before it ${record.seq - state.expectedSeq > 1 ? 'are' : 'is'} missing (deleted)`
        : `seq ${state.expectedSeq} was expected (a record was inserted or renumbered)`;
    return {
      ...at,
      reason: 'seq_gap',
      message: `Record ${record.id} has seq ${record.seq}: ${what}.`,
    };
  }
  if (record.prevHash !== state.previousHash) {
    const before =
      state.previousId === null
        ? "the chain's base"
        : `record ${state.previousId} (seq ${state.expectedSeq - 1})`;
    return {
      ...at,
      reason: 'broken_link',
      message: `Record ${record.id} (seq ${record.seq}) names prev_hash ${record.prevHash.slice(0, 12)}…, but ${before} hashes to ${state.previousHash.slice(0, 12)}…: one of them was replaced or rewritten.`,
    };
  }
  return null;
}

/** Walks one account's chain from its base to its head. */
export async function verifyChain(
  repository: AuditRepository,
  accountId: string,
  genesis: string,
): Promise<ChainReport> {
  const chain = await repository.chain(accountId);
  const state: WalkState = {
    expectedSeq: (chain?.base_seq ?? 0) + 1,
    previousHash: chain?.base_hash ?? genesis,
    previousId: null,
  };
  let walked = 0;
  let firstSeq: number | null = null;
  for (let after = -1; ;) {
    const rows = await repository.recordsAfter(accountId, after, batchSize);
    for (const row of rows) {
      const record = recordOf(row);
      const found =
        chain === undefined
          ? {
              recordId: record.id,
              seq: record.seq,
              reason: 'missing_head' as const,
              message: `Account ${accountId} has records but no chain head: the head row was deleted.`,
            }
          : checkRecord(record, state);
      if (found !== null) return { ok: false, broken: { accountId, ...found } };
      firstSeq ??= record.seq;
      state.previousHash = record.hash;
      state.previousId = record.id;
      state.expectedSeq += 1;
      walked += 1;
    }
    if (rows.length < batchSize) break;
    after = rows[rows.length - 1]!.seq;
  }
  const lastSeq = state.expectedSeq - 1;
  if (chain === undefined) {
    return {
      ok: true,
      chain: { accountId, records: 0, firstSeq: null, lastSeq, lastHash: genesis },
    };
  }
  if (chain.last_seq !== lastSeq || chain.last_hash !== state.previousHash) {
    return {
      ok: false,
      broken: {
        accountId,
        recordId: null,
        seq: chain.last_seq,
        reason: 'head_mismatch',
        message: `The chain of account ${accountId} ends at seq ${lastSeq}, but its head says seq ${chain.last_seq} was written: the records after ${lastSeq} were deleted (or the head was changed).`,
      },
    };
  }
  return {
    ok: true,
    chain: { accountId, records: walked, firstSeq, lastSeq, lastHash: chain.last_hash },
  };
}

/** Verifies the chains of `accounts` (default: every account with a chain), stopping at the first break. */
export async function verifyChains(
  repository: AuditRepository,
  genesis: string,
  accounts?: readonly string[],
): Promise<
  { ok: true; chains: ChainSummary[] } | { ok: false; broken: ChainBreak; chains: ChainSummary[] }
> {
  const chains: ChainSummary[] = [];
  for (const accountId of accounts ?? (await repository.chainAccounts())) {
    const report = await verifyChain(repository, accountId, genesis);
    if (!report.ok) return { ok: false, broken: report.broken, chains };
    chains.push(report.chain);
  }
  return { ok: true, chains };
}
