// The usage ledger's rows: written in batches, deleted by age, and read back per account.
import { CompiledQuery, type Kysely } from 'kysely';
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

/** Rows per INSERT at most: a statement stays well under both databases' parameter limits. */
const rowsPerInsert = 128;

/** The columns in the order each row's values are bound. */
const columns = [
  'id',
  'account_id',
  'api_key_id',
  'end_user',
  'route',
  'model',
  'provider',
  'deployment',
  'execution_id',
  'input_tokens',
  'output_tokens',
  'cached_input_tokens',
  'cache_write_tokens',
  'reasoning_tokens',
  'audio_ms',
  'characters',
  'status',
  'error_code',
  'latency_ms',
  'cache_hit',
  'cost_micros',
  'created_at',
] as const satisfies ReadonlyArray<keyof UsageRecordsTable>;

type Dialect = 'sqlite' | 'postgres';

/** A record's values in `columns` order (booleans as each database takes them). */
function valuesOf(record: UsageRecord, dialect: Dialect): unknown[] {
  const { usage } = record;
  return [
    record.id,
    record.accountId,
    record.apiKeyId,
    record.endUser,
    record.route,
    record.model,
    record.provider,
    record.deployment,
    record.executionId,
    usage.inputTokens,
    usage.outputTokens,
    usage.cachedInputTokens,
    usage.cacheWriteTokens,
    usage.reasoningTokens,
    Math.round(usage.audioMs),
    usage.characters,
    record.status,
    record.errorCode,
    Math.round(record.latencyMs),
    dialect === 'postgres' ? record.cacheHit : record.cacheHit ? 1 : 0,
    record.costMicros,
    record.createdAt,
  ];
}

/**
 * The INSERT of `rows` rows, its text made once per size and dialect. A batch is written in
 * statements of power-of-two sizes (128, then 64, 32 … for the rest), so that the few texts
 * recur and SQLite's statement cache (dialects/sqlite.ts) prepares each once; and the rows are
 * bound as plain parameters, without building a query tree of thousands of values per batch.
 * On SQLite the statement is `INSERT OR FAIL`: a failing row leaves the statement's earlier rows
 * in place rather than undoing them, so SQLite keeps no statement journal of the pages each
 * statement changes (a temporary file past 64 KiB: about half the ledger's page writes). The
 * batch's transaction is rolled back whole on any failure all the same.
 */
const insertTexts = new Map<string, string>();
function insertText(dialect: Dialect, rows: number): string {
  const key = `${dialect}:${rows}`;
  let text = insertTexts.get(key);
  if (text === undefined) {
    let parameter = 0;
    const placeholder = dialect === 'postgres' ? () => `$${++parameter}` : () => '?';
    const tuple = () => `(${columns.map(placeholder).join(', ')})`;
    const verb = dialect === 'sqlite' ? 'insert or fail' : 'insert';
    text = `${verb} into "usage_records" (${columns.map((name) => `"${name}"`).join(', ')}) values ${Array.from({ length: rows }, tuple).join(', ')}`;
    insertTexts.set(key, text);
  }
  return text;
}

/** The sizes a batch of `count` rows is written in: 128s, then the rest's binary digits. */
function statementSizes(count: number): number[] {
  const sizes: number[] = [];
  let left = count;
  for (let size = rowsPerInsert; left > 0; size = Math.max(1, size >> 1)) {
    while (left >= size) {
      sizes.push(size);
      left -= size;
    }
  }
  return sizes;
}

export class UsageRecordsRepository {
  constructor(
    private readonly db: Kysely<DatabaseSchema>,
    private readonly dialect: 'sqlite' | 'postgres',
  ) {}

  /** Writes the records, in statements of a bounded size, all or none. */
  async insert(records: readonly UsageRecord[]): Promise<void> {
    if (records.length === 0) return;
    const dialect = this.dialect;
    await this.db.transaction().execute(async (transaction) => {
      let start = 0;
      for (const size of statementSizes(records.length)) {
        const parameters: unknown[] = [];
        for (let index = start; index < start + size; index += 1) {
          parameters.push(...valuesOf(records[index]!, dialect));
        }
        await transaction.executeQuery(CompiledQuery.raw(insertText(dialect, size), parameters));
        start += size;
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
