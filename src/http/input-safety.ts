// Values no route may store, refused for every request before any work: NUL characters and lone
// surrogates (PostgreSQL cannot store them; SQLite would, so the dialects would disagree),
// non-finite numbers (JSON's 1e999 parses to Infinity), and nesting past a fixed depth (which
// would overflow recursive code further on). Each refusal is a 400 naming the field.
import type { FastifyRequest } from 'fastify';
import { AppError } from '../errors/app-error.js';
import { paramPath } from '../errors/schema-errors.js';
import { findForbiddenKey, forbiddenKeyError } from '../validation/safe-keys.js';
import type { App } from './types.js';

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

interface Found {
  path: string[];
  problem: string;
}

/** The first unstorable value in a parsed JSON document, walked without recursion. */
export function findUnstorableValue(document: unknown): Found | null {
  const stack: Array<{ value: unknown; path: string[]; depth: number }> = [
    { value: document, path: [], depth: 1 },
  ];
  while (stack.length > 0) {
    const { value, path, depth } = stack.pop()!;
    if (typeof value === 'string') {
      const problem = stringProblem(value);
      if (problem !== null) return { path, problem };
    } else if (typeof value === 'number') {
      if (!Number.isFinite(value)) return { path, problem: 'must be a finite number' };
    } else if (typeof value === 'object' && value !== null) {
      if (depth > maxNestingDepth) {
        return { path, problem: `is nested deeper than ${maxNestingDepth} levels` };
      }
      const entries = Array.isArray(value)
        ? (value as unknown[]).map((item, index) => [String(index), item] as const)
        : Object.entries(value);
      for (let index = entries.length - 1; index >= 0; index -= 1) {
        const [key, item] = entries[index]!;
        const keyProblem = stringProblem(key);
        if (keyProblem !== null) {
          return { path: [...path, key], problem: `has a key that ${keyProblem}` };
        }
        stack.push({ value: item, path: [...path, key], depth: depth + 1 });
      }
    }
  }
  return null;
}

function refusal(found: Found, prefix?: string): AppError {
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

/** The 400 for the first unstorable value of a request's path parameters or query string. */
function checkTextParts(request: FastifyRequest): AppError | null {
  for (const [part, values] of [
    ['path', request.params],
    ['query', request.query],
  ] as const) {
    if (typeof values !== 'object' || values === null) continue;
    for (const [name, value] of Object.entries(values as Record<string, unknown>)) {
      for (const text of Array.isArray(value) ? value : [value]) {
        const problem = typeof text === 'string' ? stringProblem(text) : null;
        if (problem !== null) {
          return new AppError('invalid_parameter', `The ${part} parameter '${name}' ${problem}.`, {
            param: name,
          });
        }
      }
      const keyProblem = stringProblem(name);
      if (keyProblem !== null) {
        return new AppError('invalid_parameter', `A ${part} parameter name ${keyProblem}.`, {
          param: null,
        });
      }
    }
  }
  return null;
}

/**
 * Fastify's parser refuses a body with a `__proto__` key (or `constructor.prototype`) anywhere as
 * "not valid JSON". When the text is valid JSON, that is what happened: the refusal names the key
 * (`metadata.__proto__`) like every other reserved name. (`JSON.parse` makes such a key an own
 * property, so the second reading cannot touch a prototype.)
 */
function poisonedKeyRefusal(text: string): AppError | null {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch {
    return null;
  }
  const found = findForbiddenKey(document);
  return found === null ? null : forbiddenKeyError(found.param, found.key);
}

/**
 * Replaces Fastify's JSON body parser with the same parser (prototype-poisoning checks included)
 * followed by the walk above, and checks path and query values before validation.
 */
export function installInputSafety(app: App): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    void parseJson(request, text, (error, document) => {
      if (error !== null) {
        done(
          (error as { code?: string }).code === 'FST_ERR_CTP_INVALID_JSON_BODY'
            ? (poisonedKeyRefusal(text) ?? error)
            : error,
          undefined,
        );
        return;
      }
      const found = findUnstorableValue(document);
      if (found === null) done(null, document);
      else done(refusal(found), undefined);
    });
  });
  app.addHook('preValidation', (request, _reply, done) => {
    done(checkTextParts(request) ?? undefined);
  });
}
