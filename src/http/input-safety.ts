// Values no route may store, refused for every request before any work (the checks themselves are
// in src/validation/input-values.ts): the JSON body parser, bodies over 1 MiB parsed in a text
// thread, and path and query values checked before validation. Each refusal is a 400 naming the
// field.
import type { FastifyRequest } from 'fastify';
import { AppError } from '../errors/app-error.js';
import {
  findUnstorableValue,
  inlineBodyBytes,
  refusal,
  stringProblem,
} from '../validation/input-values.js';
import { findPoisonedKey, forbiddenKeyError } from '../validation/safe-keys.js';
import type { App } from './types.js';

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
 * (`metadata.__proto__`) like every other reserved name, found by the rule large bodies are checked
 * with (`findPoisonedKey`, the same keys the parser refuses). (`JSON.parse` makes such a key an own
 * property, so the second reading cannot touch a prototype.)
 */
function poisonedKeyRefusal(text: string): AppError | null {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch {
    return null;
  }
  const found = findPoisonedKey(document);
  return found === null ? null : forbiddenKeyError(found.param, found.key);
}

/**
 * Replaces Fastify's JSON body parser with the same parser (prototype-poisoning checks included)
 * followed by the walk above, and checks path and query values before validation.
 */
export interface InputSafetyOptions {
  /**
   * Parses and checks a body longer than `inlineBodyBytes` off the event loop (the text worker
   * threads): parsing 16 MiB of dense JSON held the loop for a second or more.
   */
  parseLarge?: (body: Uint8Array) => Promise<unknown>;
}

export function installInputSafety(app: App, options: InputSafetyOptions = {}): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const bytes = typeof body === 'string' ? Buffer.from(body) : body;
    // A large body's bytes go to a text thread as they are: decoding and parsing happen there.
    if (options.parseLarge !== undefined && bytes.byteLength > inlineBodyBytes) {
      options.parseLarge(bytes).then(
        (document) => done(null, document),
        (error: unknown) => done(error as Error, undefined),
      );
      return;
    }
    const text = bytes.toString('utf8');
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
