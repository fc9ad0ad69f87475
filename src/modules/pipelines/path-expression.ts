// Pipeline path expressions: parsing, checking at save time, and resolving at run time.
//
// Grammar (documented in docs/agents-and-pipelines.md and the OpenAPI document):
//   path     = "$." root segment* ;
//   root     = "input" "." key                  (an input of the pipeline run)
//            | "stages" "." key "." key         (an earlier stage's output: stage name, output key)
//            | "output" "." key ;               (the stage's own output; output_mapping only)
//   segment  = "." key | "[" index "]" | '["' text '"]' ;
//   key      = [A-Za-z_][A-Za-z0-9_-]* ;
//   index    = a non-negative integer.
// A stage name that is not a key is written in brackets: $.stages["summarize text"].summary.
// No key or stage name may be a reserved name (__proto__, constructor, prototype), however written.

import { defineOwn, forbiddenKeyReason, isForbiddenKey } from '../../validation/safe-keys.js';

export type PathRoot = 'input' | 'stages' | 'output';
export type PathStep = string | number;

export interface PathExpression {
  readonly text: string;
  readonly root: PathRoot;
  /** For `stages`: the stage name; otherwise null. */
  readonly stage: string | null;
  /** Keys and indexes after the root (and the stage name), at least one. */
  readonly steps: readonly PathStep[];
}

export class PathSyntaxError extends Error {
  constructor(
    readonly text: string,
    reason: string,
  ) {
    super(`'${text}' is not a path expression: ${reason}`);
    this.name = 'PathSyntaxError';
  }
}

const keyPattern = /^[A-Za-z_][A-Za-z0-9_-]*/;

function readSteps(text: string, rest: string): PathStep[] {
  const steps: PathStep[] = [];
  let remaining = rest;
  while (remaining.length > 0) {
    if (remaining.startsWith('.')) {
      const key = keyPattern.exec(remaining.slice(1));
      if (key === null)
        throw new PathSyntaxError(text, `expected a key after '.' at '${remaining}'`);
      steps.push(key[0]);
      remaining = remaining.slice(1 + key[0].length);
    } else if (remaining.startsWith('["')) {
      const end = remaining.indexOf('"]', 2);
      if (end === -1) throw new PathSyntaxError(text, 'an opening [" has no closing "]');
      const key = remaining.slice(2, end);
      if (key === '' || key.includes('"'))
        throw new PathSyntaxError(text, 'an empty or quoted key in [" "]');
      steps.push(key);
      remaining = remaining.slice(end + 2);
    } else if (remaining.startsWith('[')) {
      const index = /^\[(\d{1,9})\]/.exec(remaining);
      if (index === null) throw new PathSyntaxError(text, `expected [<index>] at '${remaining}'`);
      steps.push(Number(index[1]));
      remaining = remaining.slice(index[0].length);
    } else {
      throw new PathSyntaxError(text, `unexpected '${remaining[0] ?? ''}'`);
    }
  }
  for (const step of steps) {
    if (typeof step === 'string' && isForbiddenKey(step)) {
      throw new PathSyntaxError(text, forbiddenKeyReason(step));
    }
  }
  return steps;
}

export function parsePath(text: string): PathExpression {
  if (!text.startsWith('$.')) throw new PathSyntaxError(text, "it must start with '$.'");
  const rootMatch = /^(input|stages|output)(?=[.[]|$)/.exec(text.slice(2));
  if (rootMatch === null) {
    throw new PathSyntaxError(text, "it must start with '$.input', '$.stages' or '$.output'");
  }
  const root = rootMatch[1] as PathRoot;
  const steps = readSteps(text, text.slice(2 + root.length));
  if (root === 'stages') {
    const [stage, ...rest] = steps;
    if (typeof stage !== 'string')
      throw new PathSyntaxError(text, 'a stage name must follow $.stages');
    if (rest.length === 0)
      throw new PathSyntaxError(text, `name an output key of stage '${stage}'`);
    return { text, root, stage, steps: rest };
  }
  if (steps.length === 0 || typeof steps[0] !== 'string') {
    throw new PathSyntaxError(text, `name a key after $.${root}`);
  }
  return { text, root, stage: null, steps };
}

/** The value at `steps` in `value`, or undefined when any step is missing. */
export function valueAt(value: unknown, steps: readonly PathStep[]): unknown {
  let current = value;
  for (const step of steps) {
    if (typeof step === 'number') {
      if (!Array.isArray(current) || step >= current.length) return undefined;
      current = current[step];
    } else {
      if (current === null || typeof current !== 'object' || Array.isArray(current))
        return undefined;
      if (!Object.prototype.hasOwnProperty.call(current, step)) return undefined;
      current = (current as Record<string, unknown>)[step];
    }
  }
  return current;
}

/** A dotted stage-input name's keys that are reserved names, the first one; else null. */
export function forbiddenKeyIn(name: string): string | null {
  return name.split('.').find((key) => isForbiddenKey(key)) ?? null;
}

/**
 * Sets `value` at a dotted stage-input name (`parameters.result_count`) in `target`, creating
 * objects on the way: input names address the agent's execution input. Only own properties are
 * walked and every property is defined, never assigned (no setter, no prototype is reached); a
 * name with a reserved key (`parameters.__proto__.x`) is refused before anything is set.
 */
export function setAt(target: Record<string, unknown>, name: string, value: unknown): void {
  const forbidden = forbiddenKeyIn(name);
  if (forbidden !== null) throw new PathSyntaxError(name, forbiddenKeyReason(forbidden));
  const keys = name.split('.');
  let current = target;
  for (const key of keys.slice(0, -1)) {
    const next = Object.hasOwn(current, key) ? current[key] : undefined;
    if (next === null || typeof next !== 'object' || Array.isArray(next)) {
      const created: Record<string, unknown> = {};
      defineOwn(current, key, created);
      current = created;
    } else {
      current = next as Record<string, unknown>;
    }
  }
  defineOwn(current, keys[keys.length - 1]!, value);
}
