// Values no request may store, checked in a parsed JSON document: NUL characters and lone
// surrogates (PostgreSQL cannot store them; SQLite would, so the dialects would disagree),
// non-finite numbers (JSON's 1e999 parses to Infinity), and nesting past a fixed depth (which
// would overflow recursive code further on); and the parse of a large body with those checks, which
// runs in a text thread. Each refusal is a 400 naming the field. The HTTP layer installs them
// (src/http/input-safety.ts).
import { AppError } from '../errors/app-error.js';
import { paramPath } from '../errors/schema-errors.js';
import { walkJson } from './json-walk.js';
import { findPoisonedKey, forbiddenKeyError } from './safe-keys.js';

/** Deepest nesting of objects and arrays accepted in a body (the body itself is level 1). */
export const maxNestingDepth = 32;

const nul = '\u0000';

/** Why a string cannot be stored, or null when it can. */
export function stringProblem(value: string): string | null {
  if (value.includes(nul)) return 'contains a NUL character (\\u0000), which cannot be stored';
  if (!value.isWellFormed()) {
    return 'contains a lone surrogate (malformed UTF-16), which cannot be stored';
  }
  return null;
}

export interface Found {
  path: string[];
  problem: string;
}

/** Why a key or a leaf value cannot be stored, or null. */
function leafProblem(value: string | number): string | null {
  if (typeof value === 'string') return stringProblem(value);
  if (!Number.isFinite(value)) return 'must be a finite number';
  return null;
}

const asPath = (steps: (string | number)[]): string[] => steps.map(String);

/**
 * The first unstorable value in a parsed JSON document, in document order (a 300,000-item array
 * costs a few milliseconds: the walk allocates nothing per value, src/validation/json-walk.ts).
 */
export function findUnstorableValue(document: unknown): Found | null {
  return walkJson<Found>(document, {
    container: (_value, at) =>
      at.depth + 1 > maxNestingDepth
        ? { path: asPath(at.path()), problem: `is nested deeper than ${maxNestingDepth} levels` }
        : null,
    key: (key, at) => {
      const problem = stringProblem(key);
      return problem === null
        ? null
        : { path: asPath(at.path(key)), problem: `has a key that ${problem}` };
    },
    leaf: (value, at) => {
      const problem = leafProblem(value);
      return problem === null ? null : { path: asPath(at.path()), problem };
    },
  });
}

export function refusal(found: Found, prefix?: string): AppError {
  const param =
    paramPath(
      found.path.map((part) => `/${part.replace(/~/g, '~0').replace(/\//g, '~1')}`).join(''),
      undefined,
      prefix,
    ) ??
    prefix ??
    null;
  const subject = param === null ? 'The request body' : `'${param}'`;
  return new AppError('invalid_parameter', `${subject} ${found.problem}.`, { param });
}

/** Bodies up to this many bytes are parsed on the event loop (a few tens of milliseconds). */
export const inlineBodyBytes = 1024 * 1024;

/** Most values a body longer than `inlineBodyBytes` may hold: large bodies are large strings. */
export const maxLargeBodyValues = 100_000;

/**
 * The checks of the inline path for a large body, in the thread that parses it: valid JSON, no
 * key the inline parser refuses (`findPoisonedKey`, named like every reserved name), at most
 * `maxLargeBodyValues` values, and nothing a database cannot store.
 */
export function parseLargeBody(text: string): unknown {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch {
    throw new AppError('invalid_json', 'The body is not valid JSON.');
  }
  let values = 0;
  const stack: unknown[] = [document];
  while (stack.length > 0) {
    const value = stack.pop();
    values += 1;
    if (values > maxLargeBodyValues) {
      throw new AppError(
        'invalid_parameter',
        `A request body over ${inlineBodyBytes} bytes may hold at most ${maxLargeBodyValues} JSON values (large bodies carry their size in strings, such as a document's content).`,
        { param: null },
      );
    }
    if (value !== null && typeof value === 'object') {
      for (const item of Array.isArray(value) ? value : Object.values(value)) stack.push(item);
    }
  }
  const poisoned = findPoisonedKey(document);
  if (poisoned !== null) throw forbiddenKeyError(poisoned.param, poisoned.key);
  const found = findUnstorableValue(document);
  if (found !== null) throw refusal(found);
  return document;
}
