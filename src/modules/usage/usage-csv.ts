// The ledger's records as CSV (RFC 4180): a header row, then one row per record; a field with a
// comma, a quote or a line break is quoted (quotes doubled), and a field a spreadsheet would read
// as a formula (starting with =, +, -, @, a tab or a carriage return) is prefixed with `'`.
import type {
  ExportCursor,
  UsageExportRepository,
  UsageRecordRow,
} from './usage-export.repository.js';
import type { UsageFilter } from './usage.repository.js';

/** The columns, in order: the ledger's fields, cost in dollars (empty: unknown). */
export const csvColumns = [
  'id',
  'created_at',
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
  'cost_usd',
] as const;

const formulaStart = /^[=+\-@\t\r]/;

/** One field, made safe for spreadsheets and quoted when it must be. */
export function csvField(value: string): string {
  const safe = formulaStart.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

/** Micro-dollars as a decimal string with 6 decimals (exact, whatever the size). */
export function usdText(micros: number): string {
  const negative = micros < 0;
  const digits = String(Math.abs(Math.round(micros))).padStart(7, '0');
  return `${negative ? '-' : ''}${digits.slice(0, -6)}.${digits.slice(-6)}`;
}

const text = (value: string | number | null | undefined): string =>
  value === null || value === undefined ? '' : String(value);

function csvRow(row: UsageRecordRow): string {
  const values: Record<(typeof csvColumns)[number], string> = {
    id: row.id,
    created_at: text(row.created_at),
    api_key_id: text(row.api_key_id),
    end_user: text(row.end_user),
    route: row.route,
    model: row.model,
    provider: row.provider,
    deployment: text(row.deployment),
    execution_id: text(row.execution_id),
    input_tokens: text(Number(row.input_tokens)),
    output_tokens: text(Number(row.output_tokens)),
    cached_input_tokens: text(Number(row.cached_input_tokens)),
    cache_write_tokens: text(Number(row.cache_write_tokens)),
    reasoning_tokens: text(Number(row.reasoning_tokens)),
    audio_ms: text(Number(row.audio_ms)),
    characters: text(Number(row.characters)),
    status: row.status,
    error_code: text(row.error_code),
    latency_ms: text(Number(row.latency_ms)),
    cache_hit: row.cache_hit === true || Number(row.cache_hit) === 1 ? 'true' : 'false',
    cost_usd: row.cost_micros === null ? '' : usdText(Number(row.cost_micros)),
  };
  return `${csvColumns.map((column) => csvField(values[column])).join(',')}\r\n`;
}

/** Records fetched per query: what the export holds in memory at most. */
export const exportPageSize = 1000;

/** The CSV text of the filter's records, a page of rows per chunk. */
export async function* usageCsv(
  records: Pick<UsageExportRepository, 'page'>,
  filter: UsageFilter,
  pageSize = exportPageSize,
): AsyncGenerator<string> {
  yield `${csvColumns.join(',')}\r\n`;
  let after: ExportCursor | null = null;
  for (;;) {
    const page = await records.page(filter, after, pageSize);
    if (page.length === 0) return;
    yield page.map(csvRow).join('');
    const last = page[page.length - 1]!;
    after = { createdAt: String(last.created_at), id: last.id };
    if (page.length < pageSize) return;
  }
}
