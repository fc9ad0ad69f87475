// fast-check arbitraries for malformed requests to an operation of /openapi.json: a body that
// starts from a valid-looking sample of its schema and then breaks it (deep nesting, huge and
// non-finite numbers, NUL and lone surrogates, oversized strings, wrong types, missing and
// unknown fields, text that is not JSON), queries with hostile values, and hostile path ids.
import fc from 'fast-check';

export type Schema = Record<string, unknown>;

export interface OperationParameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  schema?: Schema;
}

export interface Operation {
  method: string;
  /** The OpenAPI path template, e.g. `/v1/agents/{agent_id}`. */
  path: string;
  parameters: OperationParameter[];
  body: Schema | undefined;
}

/** A request as sent on the wire: the URL already encoded, the body already serialised. */
export interface FuzzRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  payload: string | undefined;
}

/**
 * Values JSON.stringify cannot write (1e999, numbers beyond double precision) or would overflow
 * its stack writing (nesting thousands deep) travel through serialisation as marked strings, and
 * are spliced back in as raw JSON text.
 */
const rawMark = (kind: 'number' | 'array' | 'object', argument: string) =>
  `\u0001raw:${kind}:${argument}\u0001`;
const raw = (text: string) => rawMark('number', text);
function rawText(kind: string, argument: string): string {
  if (kind === 'number') return argument;
  const depth = Number(argument);
  return kind === 'array'
    ? `${'['.repeat(depth)}1${']'.repeat(depth)}`
    : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
}
function serialise(value: unknown): string {
  return JSON.stringify(value).replace(
    /"\\u0001raw:(number|array|object):([^"\\]*)\\u0001"/g,
    (_marker, kind: string, argument: string) => rawText(kind, argument),
  );
}

/** A few characters of text, some outside the Basic Multilingual Plane and some controls. */
const shortText = fc.string({
  unit: fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...'abcxyz019 -_./:') },
    { weight: 1, arbitrary: fc.constantFrom('é', '€', '😀', '\t', '\n', '"', '\\', '%', '\u2028') },
  ),
  maxLength: 12,
});

/** The names no client may give a key, and names that carry them where a string is a key path. */
export const reservedNames = ['__proto__', 'constructor', 'prototype'] as const;
export const namesWithReservedKeys = [
  'parameters.__proto__.polluted',
  'parameters.constructor.prototype.polluted',
  'parameters.prototype',
  '$.input.__proto__.polluted',
  '$.input.constructor.prototype',
  '$.input["__proto__"]',
  '$.input.q["prototype"]',
  '$.stages["__proto__"].x',
  '$.stages.constructor.x',
  '$.stages.write.__proto__',
  '$.output.__proto__',
  '$.output["constructor"]',
  'a.__proto__.polluted',
  '__proto__.polluted',
] as const;

/** A key to add or rename to: mostly ordinary text, sometimes a reserved name or a path of one. */
const hostileKey = fc.oneof(
  { weight: 3, arbitrary: fc.string({ maxLength: 12 }) },
  { weight: 2, arbitrary: fc.constantFrom(...reservedNames, ...namesWithReservedKeys) },
);

const loneSurrogate = fc.constantFrom('\ud800', '\udfff', 'a\ud83d', '\ude00z', 'x\ud800\ud800');

/** Strings no database may store, and strings longer than any bound. */
const nastyString = fc.oneof(
  fc.tuple(shortText, shortText).map(([a, b]) => `${a}\u0000${b}`),
  fc.tuple(shortText, loneSurrogate, shortText).map(([a, s, b]) => `${a}${s}${b}`),
  fc
    .tuple(fc.constantFrom(65, 101, 257, 1_001, 2_049, 10_001, 100_001), fc.constantFrom('a', 'é'))
    .map(([length, char]) => char.repeat(length)),
  fc.constantFrom('', ' ', '../../etc/passwd', '%00', '${x}', '{{x}}', '{{constructor}}'),
  // Where a string is a key or a path of keys (stage and output names, path expressions).
  fc.constantFrom(...reservedNames, ...namesWithReservedKeys),
);

/** Numbers outside every range, written as JSON text where JSON.stringify cannot write them. */
const nastyNumber = fc.oneof(
  fc.constantFrom(
    raw('1e999'),
    raw('-1e999'),
    raw('99999999999999999999'),
    raw('-99999999999999999999'),
    raw('1e-999'),
    raw('123456789012345678901234567890.5'),
    Number.MAX_SAFE_INTEGER + 2,
    -Number.MAX_SAFE_INTEGER - 2,
    Number.MAX_VALUE,
    -Number.MAX_VALUE,
    Number.MIN_VALUE,
    -0,
    0.5,
    -1,
    2 ** 31,
    -(2 ** 31) - 1,
  ),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer(),
);

/** Arrays or objects nested a little past the limit (as values), or thousands deep (as text). */
const deepNesting = fc.oneof(
  fc.tuple(fc.constantFrom(31, 33, 64), fc.boolean()).map(([depth, arrays]) => {
    let value: unknown = 1;
    for (let level = 0; level < depth; level += 1) value = arrays ? [value] : { a: value };
    return value;
  }),
  fc
    .tuple(
      fc.constantFrom(2_000, 20_000, 100_000),
      fc.constantFrom<'array' | 'object'>('array', 'object'),
    )
    .map(([depth, kind]) => rawMark(kind, String(depth))),
);

/** Any value of a wrong kind for most fields. */
const wrongType = fc.oneof(
  fc.constantFrom(null, true, false, [], {}, [null], { '': null }, '1', 'true', 'null'),
  fc.array(fc.integer(), { maxLength: 3 }),
  fc.dictionary(shortText, fc.integer(), { maxKeys: 3 }),
);

/** What replaces a field of a sample body. */
export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: nastyString },
  { weight: 3, arbitrary: nastyNumber },
  { weight: 2, arbitrary: wrongType },
  { weight: 1, arbitrary: deepNesting },
  {
    weight: 1,
    arbitrary: fc.array(fc.constant('x'), { minLength: 101, maxLength: 2_001 }),
  },
);

/** Known good values by field name (a model of the catalog, an id of the account…). */
export type Hints = ReadonlyMap<string, readonly unknown[]>;

/**
 * A valid-looking value of a schema (bounded small), used as the starting point of mutations;
 * a field named in `hints` mostly takes one of its good values, so that requests get past the
 * first check and the mutations reach the code behind it.
 */
export function sampleOf(
  schema: Schema | undefined,
  hints: Hints = new Map(),
  depth = 0,
  name?: string,
): fc.Arbitrary<unknown> {
  const good = name === undefined ? undefined : hints.get(name);
  if (good !== undefined && good.length > 0) {
    return fc.oneof(
      { weight: 4, arbitrary: fc.constantFrom(...good) },
      { weight: 1, arbitrary: sampleOf(schema, new Map(), depth) },
    );
  }
  if (schema === undefined || depth > 6) return fc.jsonValue({ maxDepth: 1 });
  if ('const' in schema) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  for (const key of ['anyOf', 'oneOf'] as const) {
    const options = schema[key];
    if (Array.isArray(options) && options.length > 0) {
      return fc.oneof(...(options as Schema[]).map((option) => sampleOf(option, hints, depth + 1)));
    }
  }
  const type = Array.isArray(schema.type) ? (schema.type as string[])[0] : schema.type;
  const number = (key: string, fallback: number) =>
    typeof schema[key] === 'number' ? schema[key] : fallback;
  switch (type) {
    case 'string': {
      if (schema.format === 'date-time') {
        return fc
          .date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true })
          .map((date) => date.toISOString());
      }
      const minLength = number('minLength', 0);
      const maxLength = number('maxLength', 20);
      const ordinary = fc.string({
        minLength,
        maxLength: Math.max(minLength, Math.min(maxLength, 20)),
      });
      // Exactly at the bound too (a schema may allow what a column cannot hold), when not huge.
      return maxLength > 20 && maxLength <= 300_000
        ? fc.oneof(
            { weight: 5, arbitrary: ordinary },
            { weight: 1, arbitrary: fc.constant('é'.repeat(maxLength)) },
          )
        : ordinary;
    }
    case 'integer':
    case 'number': {
      const minimum = number('minimum', -1000);
      const maximum = number('maximum', 1000);
      const ordinary =
        type === 'integer'
          ? fc.integer({ min: Math.max(minimum, -1_000_000), max: Math.min(maximum, 1_000_000) })
          : fc.double({
              min: Math.max(minimum, -1_000_000),
              max: Math.min(maximum, 1_000_000),
              noNaN: true,
            });
      // The bounds themselves: the published range must fit what storage and code can hold.
      return fc.oneof(
        { weight: 4, arbitrary: ordinary },
        { weight: 1, arbitrary: fc.constantFrom(minimum, maximum) },
      );
    }
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array': {
      const minItems = number('minItems', 0);
      return fc.array(sampleOf(schema.items as Schema | undefined, hints, depth + 1), {
        minLength: minItems,
        maxLength: Math.max(minItems, Math.min(number('maxItems', 3), 3)),
      });
    }
    default: {
      const properties = (schema.properties ?? {}) as Record<string, Schema>;
      if (type !== 'object' && Object.keys(properties).length === 0) {
        return fc.jsonValue({ maxDepth: 2 });
      }
      const required = (schema.required ?? []) as string[];
      const shape = Object.fromEntries(
        Object.entries(properties).map(([key, property]) => [
          key,
          sampleOf(property, hints, depth + 1, key),
        ]),
      );
      return fc.record(shape, { requiredKeys: required.filter((name) => name in shape) });
    }
  }
}

/** Paths (lists of keys) to every value inside `value`, the root included. */
function pathsIn(
  value: unknown,
  prefix: Array<string | number> = [],
  found: Array<Array<string | number>> = [],
) {
  found.push(prefix);
  if (Array.isArray(value))
    value.forEach((item, index) => pathsIn(item, [...prefix, index], found));
  else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) pathsIn(item, [...prefix, key], found);
  }
  return found;
}

function valueAtPath(value: unknown, path: ReadonlyArray<string | number>): unknown {
  return path.reduce<unknown>(
    (inner, step) => (inner as Record<string | number, unknown>)[step],
    value,
  );
}

function replaceAt(value: unknown, path: Array<string | number>, replacement: unknown): unknown {
  if (path.length === 0) return replacement;
  const [head, ...rest] = path;
  if (Array.isArray(value)) {
    const copy = [...value];
    copy[head as number] = replaceAt(copy[head as number], rest, replacement);
    return copy;
  }
  const record = value as Record<string, unknown>;
  return { ...record, [head!]: replaceAt(record[head!], rest, replacement) };
}

function removeAt(value: unknown, path: Array<string | number>): unknown {
  if (path.length === 0) return undefined;
  if (path.length === 1 && value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const copy = { ...(value as Record<string, unknown>) };
    delete copy[path[0]!];
    return copy;
  }
  const [head, ...rest] = path;
  if (Array.isArray(value)) {
    const copy = [...value];
    copy[head as number] = removeAt(copy[head as number], rest);
    return copy;
  }
  const record = value as Record<string, unknown>;
  return { ...record, [head!]: removeAt(record[head!], rest) };
}

/** Body text that is not a JSON document, or is one that parsers disagree on. */
const brokenJson = fc.oneof(
  fc.constantFrom(
    '',
    '{',
    '{"a":',
    '[1,2',
    '{"a":1,}',
    "{'a':1}",
    'null',
    'true',
    '"text"',
    '1e999',
    '{"__proto__":{"admin":true}}',
    '{"constructor":{"prototype":{"admin":true}}}',
    '{"a":1,"a":2}',
    '\ufeff{}',
    '{"a":"\\ud800"}',
    '{"a":"\\u0000"}',
    '{"a":NaN}',
    '{"a":Infinity}',
  ),
  fc.constantFrom(2_000, 100_000).map((depth) => rawText('array', String(depth))),
  fc.string({ maxLength: 40 }),
);

/** A malformed (or merely odd) body for `schema`, serialised, with its content type. */
export function bodyFor(
  schema: Schema,
  hints: Hints = new Map(),
): fc.Arbitrary<{ text: string; contentType: string | null }> {
  const sample = sampleOf(schema, hints);
  const mutated = sample.chain((value) => {
    const paths = pathsIn(value);
    return fc.oneof(
      { weight: 2, arbitrary: fc.constant(value) },
      {
        weight: 6,
        arbitrary: fc
          .tuple(fc.constantFrom(...paths), hostileValue)
          .map(([path, replacement]) => replaceAt(value, path, replacement)),
      },
      {
        weight: 2,
        arbitrary: fc
          .constantFrom(...paths.filter((path) => path.length > 0), [])
          .map((path) => (path.length === 0 ? value : removeAt(value, path))),
      },
      {
        weight: 2,
        arbitrary: fc
          .tuple(fc.constantFrom(...paths), hostileKey, hostileValue)
          .map(([path, key, extra]) => {
            const target = valueAtPath(value, path);
            if (target === null || typeof target !== 'object' || Array.isArray(target))
              return value;
            // Defined, never assigned: a `__proto__` key stays a key of the JSON text.
            return replaceAt(
              value,
              path,
              Object.fromEntries([...Object.entries(target), [key || 'unknown_field', extra]]),
            );
          }),
      },
      {
        // A key the client names (a mapping's input name, a metadata key) becomes a reserved one.
        weight: 2,
        arbitrary: fc
          .tuple(
            fc.constantFrom(...paths.filter((path) => typeof path.at(-1) === 'string'), []),
            fc.constantFrom(...reservedNames, ...namesWithReservedKeys),
          )
          .map(([path, name]) => {
            if (path.length === 0) return value;
            const parent = valueAtPath(value, path.slice(0, -1)) as Record<string, unknown>;
            return replaceAt(
              value,
              path.slice(0, -1),
              Object.fromEntries(
                Object.entries(parent).map(([key, item]) => [
                  key === path.at(-1) ? name : key,
                  item,
                ]),
              ),
            );
          }),
      },
    );
  });
  return fc.oneof(
    {
      weight: 8,
      arbitrary: fc
        .tuple(mutated, fc.constantFrom('application/json', 'application/json; charset=utf-8'))
        .map(([value, contentType]) => ({
          text: value === undefined ? '' : serialise(value),
          contentType,
        })),
    },
    { weight: 1, arbitrary: brokenJson.map((text) => ({ text, contentType: 'application/json' })) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(
          mutated,
          fc.constantFrom(
            null,
            'text/plain',
            'application/x-www-form-urlencoded',
            'multipart/form-data; boundary=x',
            'application/json; charset=latin1',
          ),
        )
        .map(([value, contentType]) => ({
          text: value === undefined ? '' : serialise(value),
          contentType,
        })),
    },
  );
}

/** Bytes as percent-escapes: invalid UTF-8, NUL, slashes, whatever a client can put in a URL. */
const percentBytes = fc
  .uint8Array({ minLength: 1, maxLength: 8 })
  .map((bytes) =>
    [...bytes].map((byte) => `%${byte.toString(16).padStart(2, '0').toUpperCase()}`).join(''),
  );

/** Text a URL can carry, percent-encoded the way a client would. */
function encodeText(text: string): string {
  return text.isWellFormed()
    ? encodeURIComponent(text)
    : // A lone surrogate has no UTF-8 form; clients that send one send its CESU-8 bytes.
      [...text]
        .map((char) => {
          const code = char.charCodeAt(0);
          if (code < 0xd800 || code > 0xdfff || char.length > 1) return encodeURIComponent(char);
          return [0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)]
            .map((byte) => `%${byte.toString(16).toUpperCase()}`)
            .join('');
        })
        .join('');
}

/** A path id: one of the account's own objects, or something hostile. */
export function pathIdFor(validIds: readonly string[]): fc.Arbitrary<string> {
  const hostile = fc.oneof(
    nastyString.map(encodeText),
    percentBytes,
    shortText.map(encodeText),
    fc.constantFrom(
      '%',
      '%zz',
      '%E0%A4%A',
      '..',
      '.',
      '%2e%2e',
      'conv_%00',
      'x'.repeat(5_000),
      '%2F',
      'a%2Fb',
    ),
  );
  return validIds.length === 0
    ? hostile
    : fc.oneof(
        { weight: 1, arbitrary: fc.constantFrom(...validIds.map(encodeURIComponent)) },
        { weight: 2, arbitrary: hostile },
      );
}

/** A hostile (or valid-looking) query value for a parameter of `schema`. */
function queryValueFor(
  schema: Schema | undefined,
  good: readonly unknown[] = [],
): fc.Arbitrary<string> {
  return fc.oneof(
    sampleOf(schema, new Map([['value', good]]), 0, 'value').map((value) =>
      encodeText(typeof value === 'string' ? value : JSON.stringify(value)),
    ),
    fc
      .constantFrom(
        '1e999',
        'Infinity',
        '-Infinity',
        'NaN',
        '99999999999999999999',
        '-1',
        '0x10',
        '1.5',
        '',
        ' ',
        'true',
        'null',
        '[]',
        '{}',
        '-0',
        '1e3',
        '０',
      )
      .map(encodeText),
    nastyString.map(encodeText),
    percentBytes,
  );
}

/** A query string: the operation's parameters absent, valid, hostile or repeated, and strangers. */
export function queryFor(
  parameters: readonly OperationParameter[],
  hints: Hints = new Map(),
): fc.Arbitrary<string> {
  const query = parameters.filter((parameter) => parameter.in === 'query');
  const pairs = fc.tuple(
    ...query.map((parameter) =>
      fc.oneof(
        fc.constant([] as string[]),
        fc
          .array(queryValueFor(parameter.schema, hints.get(parameter.name)), {
            minLength: 1,
            maxLength: 2,
          })
          .map((values) => values.map((value) => `${encodeURIComponent(parameter.name)}=${value}`)),
      ),
    ),
    fc.array(
      fc.tuple(
        fc.oneof(
          shortText.map(encodeText),
          fc.constantFrom(
            ...reservedNames,
            '__proto__[polluted]',
            'constructor[prototype][polluted]',
            '__proto__.polluted',
            '%00',
            '%ED%A0%80',
            'a[b]',
            'a[]',
          ),
        ),
        queryValueFor(undefined),
      ),
      { maxLength: 2 },
    ),
  );
  return pairs.map((parts) => {
    // Generated values are shared with shrinking: read them, never change them.
    const strangers = parts.at(-1) as Array<[string, string]>;
    const all = [
      ...(parts.slice(0, -1) as string[][]).flat(),
      ...strangers.map(([key, value]) => `${key}=${value}`),
    ];
    return all.length === 0 ? '' : `?${all.join('&')}`;
  });
}

/** Complete hostile requests for one operation. */
export function requestFor(
  operation: Operation,
  ids: (parameter: string) => readonly string[],
  headers: Record<string, string>,
  hints: Hints = new Map(),
): fc.Arbitrary<FuzzRequest> {
  const pathParameters = operation.parameters.filter((parameter) => parameter.in === 'path');
  const pathArbitrary = fc
    .tuple(...pathParameters.map((parameter) => pathIdFor(ids(parameter.name))))
    .map((values) =>
      pathParameters.reduce(
        (path, parameter, index) => path.replace(`{${parameter.name}}`, values[index]!),
        operation.path,
      ),
    );
  const body =
    operation.body === undefined
      ? fc.constant(undefined)
      : bodyFor(operation.body, hints).map((value): Payload => value);
  const key = (headers.authorization ?? '').replace(/^Bearer /, '');
  /** Mostly the request as is; sometimes another method, a mangled key or an odd encoding. */
  const twist: fc.Arbitrary<Twist> = fc.oneof(
    { weight: 12, arbitrary: fc.constant<Twist>({}) },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS', 'TRACE')
        .map((method): Twist => ({ method })),
    },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom(
          { authorization: `bearer ${key}` },
          { authorization: `Bearer  ${key}` },
          { authorization: `Bearer ${key}x` },
          { authorization: `Bearer ${key.slice(0, -1)}` },
          { authorization: 'Bearer' },
          { authorization: `Basic ${key}` },
          { authorization: `Bearer ${'k'.repeat(10_000)}` },
          { authorization: `Bearer sk-${'é'.repeat(48)}` },
          { authorization: '', 'x-api-key': key },
          { authorization: `Bearer ${key}`, 'x-api-key': 'sk-other' },
        )
        .map((replaced): Twist => ({ headers: replaced as Record<string, string> })),
    },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom('gzip', 'deflate', 'br', 'identity', 'x-unknown', 'gzip, gzip')
        .map((encoding): Twist => ({ headers: { 'content-encoding': encoding } })),
    },
  );
  return fc
    .tuple(pathArbitrary, queryFor(operation.parameters, hints), body, twist)
    .map(([path, query, payload, changes]) => ({
      method: changes.method ?? operation.method,
      url: `${path}${query}`,
      headers: Object.fromEntries(
        Object.entries({
          ...headers,
          ...(payload?.contentType == null ? {} : { 'content-type': payload.contentType }),
          ...changes.headers,
        }).filter(([, value]) => value !== ''),
      ),
      payload: payload?.text,
    }));
}

type Payload = { text: string; contentType: string | null } | undefined;
interface Twist {
  method?: string;
  headers?: Record<string, string>;
}

/**
 * A path the document does not list: documented prefixes (and the docs' assets) followed by
 * hostile segments, `..` walks and doubled slashes, with any method.
 */
export function strayRequest(prefixes: readonly string[]): fc.Arbitrary<FuzzRequest> {
  const segment = fc.oneof(
    pathIdFor([]),
    fc.constantFrom('..', '%2e%2e', '..%2f..%2f', '', 'static', 'json', 'index.html', 'a%00.js'),
  );
  return fc
    .tuple(
      fc.constantFrom(...prefixes, '/docs', '/docs/static', '/', ''),
      fc.array(segment, { maxLength: 4 }),
      fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'),
    )
    .map(([prefix, segments, method]) => ({
      method,
      url: `${prefix}/${segments.join('/')}`,
      headers: {},
      payload: undefined,
    }));
}
