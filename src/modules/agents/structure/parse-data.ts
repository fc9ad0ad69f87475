// Turns the StructureAgent's `data` input (CSV text or an array of objects) into a typed Table.
import { parse } from 'csv-parse/sync';
import { keySegment } from './schema-check.js';
import { DataError, type Cell, type Row, type Table, rowFrom, tableLimits } from './table.js';

export const csvDelimiters = [',', ';', '\t'] as const;
export type CsvDelimiter = (typeof csvDelimiters)[number];

export interface ParseDataOptions {
  /** Skips detection; for CSV whose first lines are ambiguous. */
  delimiter?: CsvDelimiter;
  /** Where the data came from, for error paths; default `data`. */
  path?: string;
}

/** `data` as the agent receives it: CSV text, or an array of objects (JSON rows). */
export function parseData(data: unknown, options: ParseDataOptions = {}): Table {
  if (typeof data === 'string') return parseCsv(data, options);
  if (Array.isArray(data)) return tableFromRecords(data, options);
  throw new DataError(
    options.path ?? 'data',
    `expected CSV text or an array of objects, got ${describeType(data)}`,
  );
}

// ---------------------------------------------------------------------------------------------
// CSV

const integerPattern = /^-?(?:0|[1-9]\d*)$/;
// A leading zero before other digits ("02134", "007.5") marks an identifier, not a quantity.
const decimalPattern = /^-?(?:0|[1-9]\d*)\.\d+$/;
const booleanPattern = /^(?:true|false)$/i;
// Beyond 15 significant digits a double no longer holds the written number, so such a column is
// kept as text rather than silently rounded (long account numbers, high-precision readings).
const maxSignificantDigits = 15;

interface CsvRecord {
  record: string[];
  info: { lines: number };
}

export function parseCsv(text: string, options: ParseDataOptions = {}): Table {
  const path = options.path ?? 'data';
  const source = text.startsWith('\uFEFF') ? text.slice(1) : text;
  if (source.trim() === '') throw new DataError(path, 'the CSV text is empty');
  const delimiter = options.delimiter ?? detectDelimiter(source);

  let records: CsvRecord[];
  try {
    records = parse(source, {
      delimiter,
      bom: true,
      info: true,
      trim: true,
      skip_empty_lines: true,
      // Rows of nothing but delimiters (",,,") are what spreadsheets export below the data.
      skip_records_with_empty_values: true,
      // A quote inside an unquoted field (5" screen) is text, not a syntax error.
      relax_quotes: true,
      // Field counts are checked below, so the error can name the row and the header's count.
      relax_column_count: true,
      // Bytes, not characters: generous enough for any cell within the character limit.
      max_record_size: tableLimits.maxCellLength * 4,
      // The header, the allowed rows, and one more to tell that the limit was exceeded.
      to: tableLimits.maxRows + 2,
    }) as unknown as CsvRecord[];
  } catch (error) {
    throw csvSyntaxError(error, path, () => unclosedQuoteLine(source, delimiter));
  }

  const [headerRecord, ...dataRecords] = records;
  if (headerRecord === undefined) throw new DataError(path, 'the CSV text is empty');
  if (dataRecords.length > tableLimits.maxRows) {
    throw new DataError(path, `more than ${tableLimits.maxRows} rows`);
  }
  const columns = headerNames(headerRecord.record, path);

  const rawColumns: string[][] = columns.map(() => []);
  dataRecords.forEach(({ record, info }, index) => {
    const rowNumber = index + 1;
    if (record.length !== columns.length) {
      throw new DataError(
        path,
        `row ${rowNumber} (line ${info.lines}) has ${record.length} fields; the header has ${columns.length}`,
        { row: rowNumber },
      );
    }
    record.forEach((field, columnIndex) => {
      const column = columns[columnIndex] as string;
      if (field.length > tableLimits.maxCellLength) {
        throw new DataError(
          path,
          `row ${rowNumber} (line ${info.lines}), column '${column}': ${field.length} characters, more than the limit of ${tableLimits.maxCellLength}`,
          { row: rowNumber, column },
        );
      }
      (rawColumns[columnIndex] as string[]).push(field);
    });
  });

  const typedColumns = rawColumns.map(inferColumn);
  const rows: Row[] = dataRecords.map((_record, rowIndex) =>
    rowFrom(
      columns.map((column, columnIndex) => [
        column,
        (typedColumns[columnIndex] as Cell[])[rowIndex] as Cell,
      ]),
    ),
  );
  return { columns, rows };
}

function headerNames(fields: string[], path: string): string[] {
  if (fields.length > tableLimits.maxColumns) {
    throw new DataError(
      path,
      `the header has ${fields.length} columns, more than the limit of ${tableLimits.maxColumns}`,
    );
  }
  const positions = new Map<string, number>();
  return fields.map((field, index) => {
    if (field.length > tableLimits.maxCellLength) {
      throw new DataError(
        path,
        `header column ${index + 1}: ${field.length} characters, more than the limit of ${tableLimits.maxCellLength}`,
      );
    }
    // An unnamed first column is how pandas and spreadsheets export a row index.
    const name = field === '' ? `column_${index + 1}` : field;
    const earlier = positions.get(name);
    if (earlier !== undefined) {
      throw new DataError(
        path,
        `the header names column '${name}' twice (columns ${earlier + 1} and ${index + 1})`,
        { column: name },
      );
    }
    positions.set(name, index);
    return name;
  });
}

function csvSyntaxError(
  error: unknown,
  path: string,
  findUnclosedQuote: () => number | null,
): DataError {
  if (!(error instanceof Error)) return new DataError(path, 'the CSV text could not be parsed');
  const details = error as Error & { code?: unknown; lines?: unknown };
  const line = typeof details.lines === 'number' ? `line ${details.lines}: ` : '';
  switch (details.code) {
    case 'CSV_QUOTE_NOT_CLOSED': {
      // csv-parse names the line where the text ended; the line the quote opened is the useful one.
      const opened = findUnclosedQuote();
      return new DataError(
        path,
        opened === null
          ? `${line}a quoted field is never closed`
          : `line ${opened}: a quoted field opens here and is never closed`,
      );
    }
    case 'CSV_INVALID_CLOSING_QUOTE':
    case 'CSV_NON_TRIMABLE_CHAR_AFTER_CLOSING_QUOTE':
      return new DataError(
        path,
        `${line}text follows a closing quote; inside a quoted field write a quote as ""`,
      );
    case 'CSV_MAX_RECORD_SIZE':
      return new DataError(
        path,
        `${line}a field is longer than the limit of ${tableLimits.maxCellLength} characters`,
      );
    default:
      return new DataError(path, `${line}the CSV text could not be parsed (${error.message})`);
  }
}

/**
 * The line on which the last quoted field opened when the text ends inside it. Only a quote at the
 * start of a field opens one, as in csv-parse with relax_quotes (27" wide is text).
 */
function unclosedQuoteLine(text: string, delimiter: string): number | null {
  let line = 1;
  let inQuotes = false;
  let openedOn = 0;
  let atFieldStart = true;
  for (let index = 0; index < text.length; index += 1) {
    const character = text[index];
    const isLineEnd = character === '\n' || (character === '\r' && text[index + 1] !== '\n');
    if (isLineEnd) line += 1;
    if (inQuotes) {
      if (character === '"') {
        if (text[index + 1] === '"') index += 1;
        else inQuotes = false;
      }
    } else if (character === '"' && atFieldStart) {
      inQuotes = true;
      openedOn = line;
    } else if (character === delimiter || character === '\n' || character === '\r') {
      atFieldStart = true;
    } else if (character !== ' ' && character !== '\t') {
      atFieldStart = false;
    }
  }
  return inQuotes ? openedOn : null;
}

/**
 * Picks the delimiter among `,` `;` and tab from the first records: a candidate must occur in the
 * header, and the one whose count in the following records matches the header's most often wins
 * (then the one occurring more in the header; then `,` `;` tab). Counting skips quoted text, so a
 * comma inside "Smith, John" does not vote. csv-parse's own detection scores every ASCII
 * character, which lets letters or spaces win on short inputs.
 */
export function detectDelimiter(text: string): CsvDelimiter {
  const [header, ...rest] = sampleRecordCounts(text, 20);
  let best: CsvDelimiter = ',';
  let bestConsistent = -1;
  let bestInHeader = 0;
  for (const [candidate, delimiter] of csvDelimiters.entries()) {
    const inHeader = header?.[candidate] ?? 0;
    if (inHeader === 0) continue;
    const consistent = rest.filter((counts) => counts[candidate] === inHeader).length;
    if (consistent > bestConsistent || (consistent === bestConsistent && inHeader > bestInHeader)) {
      best = delimiter;
      bestConsistent = consistent;
      bestInHeader = inHeader;
    }
  }
  return best;
}

/** Per non-empty record, how often each candidate delimiter occurs outside quotes. */
function sampleRecordCounts(text: string, maxRecords: number): number[][] {
  const samples: number[][] = [];
  let counts = csvDelimiters.map(() => 0);
  let inQuotes = false;
  let hasContent = false;
  const limit = Math.min(text.length, 65_536);
  for (let index = 0; index < limit && samples.length < maxRecords; index += 1) {
    const character = text[index] as string;
    if (character === '"') {
      inQuotes = !inQuotes;
      hasContent = true;
    } else if (!inQuotes && (character === '\n' || character === '\r')) {
      if (hasContent) samples.push(counts);
      counts = csvDelimiters.map(() => 0);
      hasContent = false;
    } else if (!inQuotes) {
      const candidate = (csvDelimiters as readonly string[]).indexOf(character);
      if (candidate >= 0) counts[candidate] = (counts[candidate] ?? 0) + 1;
      if (character.trim() !== '') hasContent = true;
    }
  }
  if (hasContent && samples.length < maxRecords) samples.push(counts);
  return samples;
}

/**
 * Types one CSV column as a whole: numbers if every non-empty field is an integer or a decimal
 * with `.`, booleans if every one is true/false, otherwise text kept exactly as written. Deciding
 * per column keeps a zip-code column ("02134", "10001") uniformly text. Empty fields are null.
 */
function inferColumn(fields: string[]): Cell[] {
  const present = fields.filter((field) => field !== '');
  if (present.length > 0 && present.every(isExactNumber)) {
    return fields.map((field) => (field === '' ? null : Number(field) + 0));
  }
  if (present.length > 0 && present.every((field) => booleanPattern.test(field))) {
    return fields.map((field) => (field === '' ? null : field.toLowerCase() === 'true'));
  }
  return fields.map((field) => (field === '' ? null : field));
}

function isExactNumber(field: string): boolean {
  if (integerPattern.test(field)) return Number.isSafeInteger(Number(field));
  if (!decimalPattern.test(field)) return false;
  const significant = field.replace(/[-.]/g, '').replace(/^0+/, '');
  return significant.length <= maxSignificantDigits;
}

// ---------------------------------------------------------------------------------------------
// JSON rows

/**
 * Rows given as objects: the columns are the union of their keys in first-seen order, and a row
 * without a key has null there. Values are kept as given (no inference: JSON already has types);
 * a nested object or array is kept as its JSON text, so the data still shows in the table and can
 * be filtered with `contains`, rather than refusing common API output.
 */
export function tableFromRecords(
  records: readonly unknown[],
  options: Pick<ParseDataOptions, 'path'> = {},
): Table {
  const basePath = options.path ?? 'data';
  if (records.length > tableLimits.maxRows) {
    throw new DataError(
      basePath,
      `${records.length} rows, more than the limit of ${tableLimits.maxRows}`,
    );
  }
  const columns: string[] = [];
  const known = new Set<string>();
  const cellsByRow: Array<Map<string, Cell>> = records.map((record, index) => {
    const path = `${basePath}[${index}]`;
    if (typeof record !== 'object' || record === null || Array.isArray(record)) {
      throw new DataError(path, `expected an object, got ${describeType(record)}`, {
        row: index + 1,
      });
    }
    const cells = new Map<string, Cell>();
    for (const [key, value] of Object.entries(record)) {
      if (key === '') {
        throw new DataError(path, 'a key is empty; every column needs a name', { row: index + 1 });
      }
      if (!known.has(key)) {
        if (columns.length === tableLimits.maxColumns) {
          throw new DataError(
            path,
            `key '${key}' would be column ${columns.length + 1}, more than the limit of ${tableLimits.maxColumns}`,
            { row: index + 1, column: key },
          );
        }
        known.add(key);
        columns.push(key);
      }
      cells.set(key, cellFromJson(value, `${path}${keySegment(key)}`, index + 1, key));
    }
    return cells;
  });
  const rows = cellsByRow.map((cells) =>
    rowFrom(columns.map((column) => [column, cells.get(column) ?? null])),
  );
  return { columns, rows };
}

function cellFromJson(value: unknown, path: string, rowNumber: number, column: string): Cell {
  const location = { row: rowNumber, column };
  let cell: Cell;
  if (value === null || value === undefined) return null;
  if (typeof value === 'boolean') return value;
  if (typeof value === 'number') {
    if (!Number.isFinite(value))
      throw new DataError(path, `${value} is not a finite number`, location);
    return value;
  }
  if (typeof value === 'string') cell = value;
  else if (typeof value === 'object') cell = JSON.stringify(value);
  else throw new DataError(path, `a ${typeof value} cannot be a cell`, location);
  if (cell.length > tableLimits.maxCellLength) {
    throw new DataError(
      path,
      `${cell.length} characters${typeof value === 'object' ? ' as JSON text' : ''}, more than the limit of ${tableLimits.maxCellLength}`,
      location,
    );
  }
  return cell;
}

function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  return `a ${typeof value}`;
}
