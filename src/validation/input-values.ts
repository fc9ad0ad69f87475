// Values no request may store, checked in a parsed JSON document: NUL characters and lone
// surrogates (PostgreSQL cannot store them; SQLite would, so the dialects would disagree),
// non-finite numbers (JSON's 1e999 parses to Infinity), and nesting past a fixed depth (which
// would overflow recursive code further on); and the parse of a large body with those checks, which
// runs in a text thread. Each refusal is a 400 naming the field. The HTTP layer installs them
// (src/http/input-safety.ts).
import { AppError } from '../errors/app-error.js';
import { paramPath } from '../errors/schema-errors.js';
import { findForbiddenKey, forbiddenKeyError } from './safe-keys.js';

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

interface Frame {
  /** The object's own keys (null for an array). */
  keys: string[] | null;
  container: unknown[] | Record<string, unknown>;
  /** The next child to visit. */
  next: number;
}

/** Why a key or a leaf value cannot be stored, or null. */
function leafProblem(value: unknown): string | null {
  if (typeof value === 'string') return stringProblem(value);
  if (typeof value === 'number' && !Number.isFinite(value)) return 'must be a finite number';
  return null;
}

/**
 * The first unstorable value in a parsed JSON document. Walked depth first without recursion and
 * without allocating per value (a 300,000-item array costs a few milliseconds, not a second of
 * garbage collection): the path is read off the stack of open containers only when something is
 * found.
 */
export function findUnstorableValue(document: unknown): Found | null {
  const stack: Frame[] = [];
  const pathOf = (last?: string): string[] => {
    const path = stack.map((frame) =>
      frame.keys === null ? String(frame.next - 1) : frame.keys[frame.next - 1]!,
    );
    if (last !== undefined) path.push(last);
    return path;
  };
  const open = (value: unknown): Found | null => {
    const problem = leafProblem(value);
    if (problem !== null) return { path: pathOf(), problem };
    if (typeof value !== 'object' || value === null) return null;
    if (stack.length + 1 > maxNestingDepth) {
      return { path: pathOf(), problem: `is nested deeper than ${maxNestingDepth} levels` };
    }
    if (Array.isArray(value)) {
      stack.push({ keys: null, container: value as unknown[], next: 0 });
      return null;
    }
    const keys = Object.keys(value);
    for (const key of keys) {
      const keyProblem = stringProblem(key);
      if (keyProblem !== null)
        return { path: pathOf(key), problem: `has a key that ${keyProblem}` };
    }
    stack.push({ keys, container: value as Record<string, unknown>, next: 0 });
    return null;
  };
  const first = open(document);
  if (first !== null) return first;
  while (stack.length > 0) {
    const frame = stack[stack.length - 1]!;
    const size = frame.keys === null ? (frame.container as unknown[]).length : frame.keys.length;
    if (frame.next >= size) {
      stack.pop();
      continue;
    }
    const index = frame.next;
    frame.next += 1;
    const child =
      frame.keys === null
        ? (frame.container as unknown[])[index]
        : (frame.container as Record<string, unknown>)[frame.keys[index]!];
    // Most values are leaves that are fine: checked here without a call or a frame.
    if (typeof child === 'object' && child !== null) {
      const found = open(child);
      if (found !== null) return found;
    } else if (typeof child === 'string' || typeof child === 'number') {
      const problem = leafProblem(child);
      if (problem !== null) return { path: pathOf(), problem };
    }
  }
  return null;
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
 * `__proto__` key or `constructor.prototype` (named, like every reserved name), at most
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
  const poisoned = findForbiddenKey(document);
  if (poisoned !== null && (poisoned.key === '__proto__' || poisoned.key === 'constructor')) {
    throw forbiddenKeyError(poisoned.param, poisoned.key);
  }
  const found = findUnstorableValue(document);
  if (found !== null) throw refusal(found);
  return document;
}
