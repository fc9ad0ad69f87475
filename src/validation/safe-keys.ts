// Names no client may give to a key: `__proto__`, `constructor` and `prototype`. Wherever a client
// names a key that the service stores or uses as a key (metadata, configuration, parameters, stage
// and output names, path expressions, layout fields, template variables, run inputs), these are
// refused with a 400 naming the field, so that no key a client chose can ever reach an object's
// prototype (one tenant's request must not change what every other tenant's requests see).
import { InvalidParameterError } from '../errors/app-error.js';
import { walkJson } from './json-walk.js';

/** The reserved names, in the order messages list them. */
export const forbiddenKeys: readonly string[] = ['__proto__', 'constructor', 'prototype'];

const forbidden = new Set(forbiddenKeys);

export function isForbiddenKey(key: string): boolean {
  return forbidden.has(key);
}

/** Why `key` cannot be used, in the words of every refusal. */
export function forbiddenKeyReason(key: string): string {
  return `'${key}' is a reserved name: __proto__, constructor and prototype cannot name a key`;
}

/** Where a reserved key was found: the parameter it sits at, and the key. */
export interface ForbiddenKeyFound {
  param: string;
  key: string;
}

/** `param` with one more step: `metadata` + `owner` → `metadata.owner`, + 0 → `metadata[0]`. */
function joinParam(param: string, step: string | number): string {
  if (typeof step === 'number') return `${param}[${step}]`;
  return param === '' ? step : `${param}.${step}`;
}

/**
 * The first reserved key in a JSON-like value (own keys of objects, arrays walked), as the
 * parameter it sits at under `param`; null when there is none.
 */
export function findForbiddenKey(value: unknown, param = ''): ForbiddenKeyFound | null {
  return walkJson<ForbiddenKeyFound>(value, {
    key: (key, at) =>
      isForbiddenKey(key) ? { param: at.path(key).reduce<string>(joinParam, param), key } : null,
  });
}

const holdsPrototype = (value: unknown): boolean =>
  typeof value === 'object' && value !== null && Object.hasOwn(value, 'prototype');

/**
 * The first key of a parsed JSON body that could reach a prototype if the body were merged into an
 * object: a `__proto__` key anywhere, or a `constructor` key whose value is an object holding
 * `prototype`. This is exactly what Fastify's JSON parser (secure-json-parse) refuses, so bodies of
 * every size obey one rule: the parser of small bodies refuses them and this names the key, and the
 * text thread that parses large bodies refuses what this finds. A `prototype` data key, or a
 * `constructor` holding anything else, is left to the routes (`assertSafeKeys` where keys are
 * stored).
 */
export function findPoisonedKey(document: unknown): ForbiddenKeyFound | null {
  return walkJson<ForbiddenKeyFound>(document, {
    container: (value, at) => {
      if (Array.isArray(value)) return null;
      const key = Object.hasOwn(value, '__proto__')
        ? '__proto__'
        : holdsPrototype(ownValue(value, 'constructor'))
          ? 'constructor'
          : null;
      return key === null ? null : { param: at.path(key).reduce<string>(joinParam, ''), key };
    },
  });
}

/** The 400 for a reserved key found at `param` (the key is its last step). */
export function forbiddenKeyError(param: string, key: string, context = ''): InvalidParameterError {
  return new InvalidParameterError(param, `${context}'${param}': ${forbiddenKeyReason(key)}.`);
}

/**
 * Refuses a value in which any object, at any depth, has a reserved key: a 400 `invalid_parameter`
 * naming it (`metadata.owner.constructor`). For free-form objects whose keys the client chooses.
 */
export function assertSafeKeys(value: unknown, param: string): void {
  const found = findForbiddenKey(value, param);
  if (found !== null) throw forbiddenKeyError(found.param, found.key);
}

/** Refuses the top-level keys of `value` only (its values may be data with keys of their own). */
export function assertSafeTopLevelKeys(value: object, param = ''): void {
  for (const key of Object.keys(value)) {
    if (isForbiddenKey(key)) throw forbiddenKeyError(joinParam(param, key), key);
  }
}

/** Refuses one name a client gave (a key, a stage name) when it is reserved; `param` names it. */
export function assertSafeName(name: string, param: string, context = ''): void {
  if (isForbiddenKey(name)) throw forbiddenKeyError(param, name, context);
}

/**
 * Sets an own data property, whatever the key: `__proto__` becomes a plain property instead of
 * replacing the prototype, and no setter on the prototype chain runs.
 */
export function defineOwn(target: object, key: string, value: unknown): void {
  Object.defineProperty(target, key, {
    value,
    writable: true,
    enumerable: true,
    configurable: true,
  });
}

/** The own property `key` of `value` (an object, not an array), else undefined; never inherited. */
export function ownValue(value: unknown, key: string): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  return Object.hasOwn(value, key) ? (value as Record<string, unknown>)[key] : undefined;
}

/** For the OpenAPI descriptions of fields whose keys (or names) the client chooses. */
export const reservedKeysNote =
  '`__proto__`, `constructor` and `prototype` are reserved: a key (or name) that is one of them is a 400 `invalid_parameter` naming it.';
