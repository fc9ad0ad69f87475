// Tests for parsing the StructureAgent's data: CSV dialects, type inference, JSON rows, limits and errors.
import { describe, expect, it } from 'vitest';
import { detectDelimiter, parseCsv, parseData, tableFromRecords } from './parse-data.js';
import { DataError, tableLimits } from './table.js';

const salesCsv = [
  'region,month,product,units,amount',
  'North,2024-01,Widget,10,1200.50',
  'South,2024-01,Widget,8,980.25',
  'North,2024-02,Gadget,,450',
  'East,2024-02,"Gadget, large",5,',
].join('\n');

function errorOf(action: () => unknown): DataError {
  try {
    action();
  } catch (error) {
    if (error instanceof DataError) return error;
    throw error;
  }
  throw new Error('expected a DataError');
}

describe('parseCsv', () => {
  it('reads a sales CSV with typed columns and nulls for empty fields', () => {
    const table = parseCsv(salesCsv);
    expect(table.columns).toEqual(['region', 'month', 'product', 'units', 'amount']);
    expect(table.rows).toEqual([
      { region: 'North', month: '2024-01', product: 'Widget', units: 10, amount: 1200.5 },
      { region: 'South', month: '2024-01', product: 'Widget', units: 8, amount: 980.25 },
      { region: 'North', month: '2024-02', product: 'Gadget', units: null, amount: 450 },
      { region: 'East', month: '2024-02', product: 'Gadget, large', units: 5, amount: null },
    ]);
  });

  it('detects a semicolon CSV, as spreadsheets in many locales export it', () => {
    const table = parseCsv('Region;Monat;Betrag\nNord;Januar;1200.5\nSüd;Februar;980\n');
    expect(table.columns).toEqual(['Region', 'Monat', 'Betrag']);
    expect(table.rows[1]).toEqual({ Region: 'Süd', Monat: 'Februar', Betrag: 980 });
  });

  it('keeps decimal commas as text, since only `.` is read as a decimal point', () => {
    const table = parseCsv('item;price\nTea;3,50\nCake;4,25\n');
    expect(table.rows.map((row) => row.price)).toEqual(['3,50', '4,25']);
  });

  it('detects tab-separated values', () => {
    const table = parseCsv('name\tscore\nAda\t9.5\nLin\t7\n');
    expect(table.rows).toEqual([
      { name: 'Ada', score: 9.5 },
      { name: 'Lin', score: 7 },
    ]);
  });

  it('reads quoted fields with delimiters, doubled quotes and line breaks', () => {
    const table = parseCsv('name,comment\n"Smith, John","He said ""hi""\nand left"\n');
    expect(table.rows).toEqual([{ name: 'Smith, John', comment: 'He said "hi"\nand left' }]);
  });

  it('keeps a quote inside an unquoted field as text', () => {
    expect(parseCsv('item,size\nScreen,27" wide\n').rows).toEqual([
      { item: 'Screen', size: '27" wide' },
    ]);
  });

  it('drops a byte order mark, reads CRLF line ends, and trims unquoted fields', () => {
    const table = parseCsv('\uFEFFcity , population\r\nOslo , 709000\r\n');
    expect(table.columns).toEqual(['city', 'population']);
    expect(table.rows).toEqual([{ city: 'Oslo', population: 709000 }]);
  });

  it('skips blank lines and rows of empty fields that spreadsheets leave below the data', () => {
    const table = parseCsv('a,b\n1,2\n\n,\n3,4\n,\n');
    expect(table.rows).toEqual([
      { a: 1, b: 2 },
      { a: 3, b: 4 },
    ]);
  });

  it('reads a header without rows as columns and no rows', () => {
    expect(parseCsv('a,b,c\n')).toEqual({ columns: ['a', 'b', 'c'], rows: [] });
  });

  it('names an unnamed header column by its position, as pandas exports an index', () => {
    const table = parseCsv(',value\n0,10\n1,20\n');
    expect(table.columns).toEqual(['column_1', 'value']);
    expect(table.rows[1]).toEqual({ column_1: 1, value: 20 });
  });

  it('keeps a column named __proto__ as data, not as the prototype', () => {
    const table = parseCsv('__proto__,b\nx,1\n');
    const row = table.rows[0] as Record<string, unknown>;
    expect(Object.hasOwn(row, '__proto__')).toBe(true);
    expect(row['__proto__']).toBe('x');
    expect(Object.getPrototypeOf(row)).toBe(Object.prototype);
  });

  it('uses the delimiter it is given instead of detecting one', () => {
    expect(parseCsv('a;b,c\n1;2,3\n', { delimiter: ';' }).columns).toEqual(['a', 'b,c']);
    expect(parseCsv('a;b,c\n1;2,3\n', { delimiter: ',' }).columns).toEqual(['a;b', 'c']);
  });
});

describe('type inference per CSV column', () => {
  const column = (values: string[]) =>
    parseCsv(['value', ...values].join('\n')).rows.map((row) => row.value);

  it('reads integers, decimals with `.`, and negative numbers', () => {
    expect(column(['1', '-2', '3.25', '0.5', '-0.75', '0'])).toEqual([1, -2, 3.25, 0.5, -0.75, 0]);
  });

  it('reads -0 as 0', () => {
    expect(Object.is(column(['-0'])[0], 0)).toBe(true);
  });

  it('keeps identifiers with leading zeros as text, for the whole column', () => {
    expect(column(['02134', '10001', '94105'])).toEqual(['02134', '10001', '94105']);
    expect(column(['007.5', '1.5'])).toEqual(['007.5', '1.5']);
  });

  it('keeps a column with any non-numeric value as text, numbers included', () => {
    expect(column(['12', 'N/A', '7'])).toEqual(['12', 'N/A', '7']);
  });

  it('leaves forms it does not read as numbers as text', () => {
    expect(column(['1e5'])).toEqual(['1e5']);
    expect(column(['+5'])).toEqual(['+5']);
    expect(column(['.5'])).toEqual(['.5']);
    expect(column(['"1,234"'])).toEqual(['1,234']);
    expect(column(['0x1F'])).toEqual(['0x1F']);
  });

  it('keeps numbers a double cannot hold exactly as text', () => {
    expect(column(['9007199254740993'])).toEqual(['9007199254740993']);
    expect(column(['9007199254740991'])).toEqual([9007199254740991]);
    expect(column(['0.1234567890123456'])).toEqual(['0.1234567890123456']);
    expect(column(['0.123456789012345'])).toEqual([0.123456789012345]);
  });

  it('reads true/false in any case as booleans', () => {
    expect(column(['true', 'FALSE', 'True'])).toEqual([true, false, true]);
    expect(parseCsv('id,paid\n1,true\n2,\n').rows).toEqual([
      { id: 1, paid: true },
      { id: 2, paid: null },
    ]);
    expect(column(['true', 'yes'])).toEqual(['true', 'yes']);
  });

  it('makes an all-empty column nulls and empty text null', () => {
    expect(parseCsv('a,b\n1,\n2,\n').rows).toEqual([
      { a: 1, b: null },
      { a: 2, b: null },
    ]);
    expect(parseCsv('id,name\n1,x\n2,""\n').rows).toEqual([
      { id: 1, name: 'x' },
      { id: 2, name: null },
    ]);
  });

  it('skips a blank line even in a one-column CSV, where it cannot be told from a null', () => {
    expect(column(['1', '', '3'])).toEqual([1, 3]);
  });
});

describe('detectDelimiter', () => {
  it('prefers the candidate that splits every record like the header', () => {
    expect(detectDelimiter('a,b,c\n1,2,3\n')).toBe(',');
    expect(detectDelimiter('a;b\n1;2\n')).toBe(';');
    expect(detectDelimiter('a\tb\n1\t2\n')).toBe('\t');
  });

  it('does not count commas in text when the header has none', () => {
    expect(detectDelimiter('name;comment\nAnna;fast, friendly, kind\nBen;slow, but ok\n')).toBe(
      ';',
    );
  });

  it('does not count delimiters inside quotes', () => {
    expect(detectDelimiter('"a;b;c",d\n"1;2;3",4\n')).toBe(',');
  });

  it('chooses by consistency when the header holds several candidates', () => {
    expect(detectDelimiter('a,b;c\n1,2;3\nx;y;z\n')).toBe(',');
    expect(detectDelimiter('a,b;c;d\n1;2;3,4\n5;6;7,8\n')).toBe(';');
  });

  it('falls back to a comma for a single column', () => {
    expect(detectDelimiter('name\nAda\n')).toBe(',');
  });
});

describe('CSV errors', () => {
  it('refuses empty text', () => {
    expect(errorOf(() => parseCsv('')).message).toBe('data: the CSV text is empty');
    expect(errorOf(() => parseCsv(' \n \n')).message).toBe('data: the CSV text is empty');
  });

  it('names the row and line of a row with too few or too many fields', () => {
    const short = errorOf(() => parseCsv('a,b,c\n1,2,3\n4,5\n'));
    expect(short.message).toBe('data: row 2 (line 3) has 2 fields; the header has 3');
    expect(short.row).toBe(2);
    expect(short.param).toBe('data');
    expect(errorOf(() => parseCsv('a,b\n\n1,2,3\n')).message).toBe(
      'data: row 1 (line 3) has 3 fields; the header has 2',
    );
  });

  it('reports the line where an unclosed quote opens', () => {
    expect(errorOf(() => parseCsv('a,b\n1,"open\n2,3\n4,5\n')).message).toBe(
      'data: line 2: a quoted field opens here and is never closed',
    );
    const csv = 'a;b\r\n"x\r\ny";27" wide\r\n3;"""quoted"" and open\r\n';
    expect(errorOf(() => parseCsv(csv)).message).toBe(
      'data: line 4: a quoted field opens here and is never closed',
    );
  });

  it('reports text after a closing quote', () => {
    expect(errorOf(() => parseCsv('a,b\n1,"x"y\n')).message).toBe(
      'data: line 2: text follows a closing quote; inside a quoted field write a quote as ""',
    );
  });

  it('refuses a header that names a column twice', () => {
    const error = errorOf(() => parseCsv('id,name,id\n1,a,2\n'));
    expect(error.message).toBe("data: the header names column 'id' twice (columns 1 and 3)");
    expect(error.column).toBe('id');
  });

  it('refuses a cell longer than the limit, naming its row and column', () => {
    const long = 'x'.repeat(tableLimits.maxCellLength + 1);
    const error = errorOf(() => parseCsv(`id,notes\n1,ok\n2,${long}\n`));
    expect(error.message).toBe(
      "data: row 2 (line 3), column 'notes': 10001 characters, more than the limit of 10000",
    );
    expect(error.row).toBe(2);
    expect(error.column).toBe('notes');
    expect(parseCsv(`id,notes\n1,${'x'.repeat(tableLimits.maxCellLength)}\n`).rows).toHaveLength(1);
  });

  it('refuses a field far beyond the limit before buffering all of it', () => {
    const huge = 'y'.repeat(tableLimits.maxCellLength * 5);
    expect(errorOf(() => parseCsv(`id,notes\n1,${huge}\n`)).message).toBe(
      'data: line 2: a field is longer than the limit of 10000 characters',
    );
  });

  it('refuses a header longer than the limit', () => {
    const long = 'h'.repeat(tableLimits.maxCellLength + 1);
    expect(errorOf(() => parseCsv(`id,${long}\n1,2\n`)).message).toBe(
      'data: header column 2: 10001 characters, more than the limit of 10000',
    );
  });

  it('refuses more columns than the limit', () => {
    const header = Array.from({ length: tableLimits.maxColumns + 1 }, (_, index) => `c${index}`);
    expect(errorOf(() => parseCsv(`${header.join(',')}\n`)).message).toBe(
      'data: the header has 501 columns, more than the limit of 500',
    );
    expect(parseCsv(`${header.slice(1).join(',')}\n`).columns).toHaveLength(500);
  });

  it('refuses more rows than the limit', () => {
    const rows = (count: number) => `n\n${'1\n'.repeat(count)}`;
    expect(parseCsv(rows(tableLimits.maxRows)).rows).toHaveLength(tableLimits.maxRows);
    expect(errorOf(() => parseCsv(rows(tableLimits.maxRows + 1))).message).toBe(
      'data: more than 100000 rows',
    );
  });

  it('names errors under the path it is given', () => {
    expect(errorOf(() => parseCsv('', { path: 'input.data' })).message).toBe(
      'input.data: the CSV text is empty',
    );
  });
});

describe('tableFromRecords', () => {
  it('unites the keys in first-seen order and fills missing keys with null', () => {
    const table = tableFromRecords([
      { region: 'North', amount: 1200 },
      { region: 'South', units: 8 },
      { amount: 300, region: 'East', note: 'new store' },
    ]);
    expect(table.columns).toEqual(['region', 'amount', 'units', 'note']);
    expect(table.rows).toEqual([
      { region: 'North', amount: 1200, units: null, note: null },
      { region: 'South', amount: null, units: 8, note: null },
      { region: 'East', amount: 300, units: null, note: 'new store' },
    ]);
  });

  it('keeps JSON values as they are, without inference', () => {
    expect(tableFromRecords([{ zip: '02134', count: '7', ok: true, none: null }]).rows).toEqual([
      { zip: '02134', count: '7', ok: true, none: null },
    ]);
  });

  it('keeps nested objects and arrays as their JSON text', () => {
    expect(
      tableFromRecords([{ id: 1, customer: { name: 'Ada', tier: 2 }, tags: ['a', 'b'] }]).rows,
    ).toEqual([{ id: 1, customer: '{"name":"Ada","tier":2}', tags: '["a","b"]' }]);
  });

  it('reads undefined as null', () => {
    expect(tableFromRecords([{ a: undefined, b: 1 }]).rows).toEqual([{ a: null, b: 1 }]);
  });

  it('reads a key named like an Object.prototype member only when the row has it', () => {
    const table = tableFromRecords([{ a: 1 }, { a: 2, constructor: 'x' }]);
    expect(table.rows[0]).toEqual({ a: 1, constructor: null });
    expect(table.rows[1]).toEqual({ a: 2, constructor: 'x' });
  });

  it('gives an empty array an empty table', () => {
    expect(tableFromRecords([])).toEqual({ columns: [], rows: [] });
  });

  it('refuses rows that are not objects, naming the index', () => {
    expect(errorOf(() => tableFromRecords([{ a: 1 }, 5])).message).toBe(
      'data[1]: expected an object, got a number',
    );
    expect(errorOf(() => tableFromRecords([['a', 'b']])).message).toBe(
      'data[0]: expected an object, got an array',
    );
    expect(errorOf(() => tableFromRecords([null])).message).toBe(
      'data[0]: expected an object, got null',
    );
  });

  it('refuses an empty key', () => {
    expect(errorOf(() => tableFromRecords([{ '': 1 }])).message).toBe(
      'data[0]: a key is empty; every column needs a name',
    );
  });

  it('refuses values JSON cannot carry', () => {
    expect(errorOf(() => tableFromRecords([{ a: 1 }, { a: Number.NaN }])).message).toBe(
      'data[1].a: NaN is not a finite number',
    );
    expect(errorOf(() => tableFromRecords([{ 'unit price': Infinity }])).message).toBe(
      "data[0]['unit price']: Infinity is not a finite number",
    );
    expect(errorOf(() => tableFromRecords([{ a: 10n }])).message).toBe(
      'data[0].a: a bigint cannot be a cell',
    );
  });

  it('refuses text longer than the limit, nested JSON included', () => {
    const long = 'x'.repeat(tableLimits.maxCellLength + 1);
    const error = errorOf(() => tableFromRecords([{ id: 1 }, { id: 2, notes: long }]));
    expect(error.message).toBe('data[1].notes: 10001 characters, more than the limit of 10000');
    expect(error.row).toBe(2);
    expect(error.column).toBe('notes');
    expect(
      errorOf(() => tableFromRecords([{ items: ['y'.repeat(tableLimits.maxCellLength)] }])).message,
    ).toBe('data[0].items: 10004 characters as JSON text, more than the limit of 10000');
  });

  it('refuses more columns than the limit, naming the key that exceeds it', () => {
    const wide = Object.fromEntries(
      Array.from({ length: tableLimits.maxColumns }, (_, index) => [`c${index}`, index]),
    );
    expect(tableFromRecords([wide]).columns).toHaveLength(500);
    expect(errorOf(() => tableFromRecords([wide, { extra: 1 }])).message).toBe(
      "data[1]: key 'extra' would be column 501, more than the limit of 500",
    );
  });

  it('refuses more rows than the limit', () => {
    const rows = Array.from({ length: tableLimits.maxRows + 1 }, () => ({ a: 1 }));
    expect(errorOf(() => tableFromRecords(rows)).message).toBe(
      'data: 100001 rows, more than the limit of 100000',
    );
  });
});

describe('parseData', () => {
  it('reads text as CSV and an array as rows', () => {
    expect(parseData('a\n1\n')).toEqual({ columns: ['a'], rows: [{ a: 1 }] });
    expect(parseData([{ a: '1' }])).toEqual({ columns: ['a'], rows: [{ a: '1' }] });
  });

  it('refuses anything else', () => {
    const error = errorOf(() => parseData({ rows: [] }));
    expect(error.message).toBe('data: expected CSV text or an array of objects, got an object');
    expect(error.code).toBe('invalid_parameter');
    expect(error.status).toBe(400);
    expect(errorOf(() => parseData(42)).message).toBe(
      'data: expected CSV text or an array of objects, got a number',
    );
    expect(errorOf(() => parseData(null, { path: 'input.data' })).message).toBe(
      'input.data: expected CSV text or an array of objects, got null',
    );
  });
});
