// The usage ledger's rows: written in batches, deleted by age, and read back per account.
import type { Kysely } from 'kysely';
import type { MeteredUsage } from '../../models/metering.js';
import type { DatabaseSchema, UsageRecordsTable } from '../../storage/schema.js';

/** One model call as the ledger keeps it. */
export interface UsageRecord {
  readonly id: string;
  readonly accountId: string;
  readonly apiKeyId: string | null;
  readonly endUser: string | null;
  readonly route: string;
  readonly model: string;
  readonly provider: string;
  readonly deployment: string | null;
  readonly executionId: string | null;
  readonly usage: MeteredUsage;
  readonly status: 'ok' | 'error' | 'aborted';
  readonly errorCode: string | null;
  readonly latencyMs: number;
  readonly cacheHit: boolean;
  /** Micro-dollars; null when the model's price is unknown. */
  readonly costMicros: number | null;
  readonly createdAt: string;
}

/** Rows per INSERT: a statement stays well under both databases' parameter limits. */
const rowsPerInsert = 200;

function rowOf(record: UsageRecord): UsageRecordsTable {
  const { usage } = record;
  return {
    id: record.id,
    account_id: record.accountId,
    api_key_id: record.apiKeyId,
    end_user: record.endUser,
    route: record.route,
    model: record.model,
    provider: record.provider,
    deployment: record.deployment,
    execution_id: record.executionId,
    input_tokens: usage.inputTokens,
    output_tokens: usage.outputTokens,
    cached_input_tokens: usage.cachedInputTokens,
    cache_write_tokens: usage.cacheWriteTokens,
    reasoning_tokens: usage.reasoningTokens,
    audio_ms: Math.round(usage.audioMs),
    characters: usage.characters,
    status: record.status,
    error_code: record.errorCode,
    latency_ms: Math.round(record.latencyMs),
    cache_hit: record.cacheHit ? 1 : 0,
    cost_micros: record.costMicros,
    created_at: record.createdAt,
  };
}

export class UsageRecordsRepository {
  constructor(
    private readonly db: Kysely<DatabaseSchema>,
    private readonly dialect: 'sqlite' | 'postgres',
  ) {}

  /** Writes the records, in statements of a bounded size, all or none. */
  async insert(records: readonly UsageRecord[]): Promise<void> {
    if (records.length === 0) return;
    const rows = records
      .map(rowOf)
      .map((row) =>
        this.dialect === 'postgres' ? { ...row, cache_hit: row.cache_hit === 1 } : row,
      );
    await this.db.transaction().execute(async (transaction) => {
      for (let start = 0; start < rows.length; start += rowsPerInsert) {
        await transaction
          .insertInto('usage_records')
          .values(rows.slice(start, start + rowsPerInsert))
          .execute();
      }
    });
  }

  /** Deletes up to `limit` records made before `before`; answers how many went. */
  async deleteOlderThan(before: string, limit: number): Promise<number> {
    const result = await this.db
      .deleteFrom('usage_records')
      .where('id', 'in', (eb) =>
        eb.selectFrom('usage_records').select('id').where('created_at', '<', before).limit(limit),
      )
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  /** How many records an account has (tests, the kill -9 count). */
  async countOf(accountId: string): Promise<number> {
    const row = await this.db
      .selectFrom('usage_records')
      .select((eb) => eb.fn.countAll<number | string>().as('count'))
      .where('account_id', '=', accountId)
      .executeTakeFirstOrThrow();
    return Number(row.count);
  }
}
