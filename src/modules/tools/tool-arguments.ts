// A tool call's arguments before the tool sees them, whoever wrote them (the model, or a person
// approving with edited arguments): at most `tools.max_argument_bytes` of text, a JSON object, and
// valid against the tool's input schema — one check for both, so that an approval cannot pass what
// the model could not. A model's arguments too large to keep are stored as a small placeholder
// object (`arguments_cut`), which is refused like the original would be.
import type { AppError } from '../../errors/app-error.js';
import { InvalidParameterError } from '../../errors/app-error.js';
import { checkAgainstSchema } from '../../validation/schema-validator.js';

/** The single key of the placeholder that stands for arguments cut before they were stored. */
const cutKey = 'arguments_cut';

export type ParsedArguments =
  | { ok: true; value: Record<string, unknown> }
  | { ok: false; problem: string };

function tooLarge(bytes: number, maxBytes: number): string {
  return `the arguments are ${bytes} bytes, more than the ${maxBytes} a call may have (tools.max_argument_bytes)`;
}

/** Whether an object is the placeholder of cut arguments; its byte count when it is. */
function cutBytes(value: Record<string, unknown>): number | null {
  const keys = Object.keys(value);
  if (keys.length !== 1 || keys[0] !== cutKey) return null;
  const bytes = (value[cutKey] as { bytes?: unknown } | null)?.bytes;
  return typeof bytes === 'number' ? bytes : 0;
}

/**
 * The placeholder stored (and fed back to the model) in place of arguments past `maxBytes`:
 * valid JSON, so every provider's translation of the model's turn still reads it.
 */
export function boundedArgumentsText(text: string, maxBytes: number): string {
  // Three bytes at most per UTF-16 unit: most texts are decided without counting.
  if (text.length * 3 <= maxBytes) return text;
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes <= maxBytes) return text;
  return JSON.stringify({ [cutKey]: { bytes, limit: maxBytes } });
}

/** A call's arguments as an object, or why they are not one (in words fit for the model). */
export function parseToolArguments(text: string, maxBytes: number): ParsedArguments {
  if (text.length * 3 > maxBytes) {
    const bytes = Buffer.byteLength(text, 'utf8');
    if (bytes > maxBytes) return { ok: false, problem: tooLarge(bytes, maxBytes) };
  }
  const source = text.trim() === '' ? '{}' : text;
  let value: unknown;
  try {
    value = JSON.parse(source);
  } catch {
    return { ok: false, problem: 'the arguments are not valid JSON' };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return { ok: false, problem: 'the arguments are not a JSON object' };
  }
  const cut = cutBytes(value as Record<string, unknown>);
  if (cut !== null) return { ok: false, problem: tooLarge(cut, maxBytes) };
  return { ok: true, value: value as Record<string, unknown> };
}

/**
 * The schema arguments are checked against: the tool's, where an object schema that lists its
 * `properties` and says nothing of others takes none (a name the tool does not declare is a
 * mistake, whether the model or a person wrote it). Schemas are bounded where they are read
 * (a server's tool list, an OpenAPI document), and compiled once per distinct text.
 */
function strictOf(given: Record<string, unknown>): Record<string, unknown> {
  // The dialect is the validator's own: a `$schema` it does not know would stop it compiling.
  const { $schema: _dialect, ...schema } = given;
  const declaresProperties =
    schema.properties !== null &&
    typeof schema.properties === 'object' &&
    !Array.isArray(schema.properties);
  if (!declaresProperties || Object.hasOwn(schema, 'additionalProperties')) return schema;
  if (Object.hasOwn(schema, 'patternProperties')) return schema;
  return { ...schema, additionalProperties: false };
}

/**
 * Why `args` do not fit the tool's `schema` — the contract's 400 naming the field under `prefix`
 * (`arguments.amount`) — or null when they fit. A schema the validator cannot compile (a server's
 * malformed one) checks nothing here: the tool itself still refuses what it cannot take.
 */
export function argumentsProblem(
  schema: Record<string, unknown> | null | undefined,
  args: Record<string, unknown>,
  prefix = 'arguments',
): AppError | null {
  if (schema === null || schema === undefined) return null;
  let checked;
  try {
    checked = checkAgainstSchema(strictOf(schema), args, "tool's arguments", prefix);
  } catch {
    return null;
  }
  return checked.ok ? null : checked.error;
}

/** The 400 for approved arguments past `maxBytes`, or null. */
export function approvedArgumentsSizeProblem(
  args: Record<string, unknown>,
  maxBytes: number,
): AppError | null {
  const bytes = Buffer.byteLength(JSON.stringify(args), 'utf8');
  if (bytes <= maxBytes) return null;
  return new InvalidParameterError(
    'arguments',
    `'arguments' is ${bytes} bytes of JSON; a call's arguments may have at most ${maxBytes} (tools.max_argument_bytes).`,
  );
}

/**
 * The checks above, bound to the service's `tools.max_argument_bytes`: what the ToolAgent's loop
 * uses for the model's calls and the approvals for a person's edits, given to both by the wiring.
 */
export interface ToolArguments {
  /** Bytes a call's arguments may have (`tools.max_argument_bytes`). */
  readonly maxBytes: number;
  /** The model's arguments text as recorded: itself, or the placeholder past the limit. */
  bounded(text: string): string;
  /** The model's arguments as an object, or why they are not one. */
  parse(text: string): ParsedArguments;
  /** Why `args` do not fit `schema` (a 400 naming the field under `prefix`), or null. */
  problem(
    schema: Record<string, unknown> | null | undefined,
    args: Record<string, unknown>,
    prefix?: string,
  ): AppError | null;
  /** Why a person's edited arguments cannot be approved (too large, or not fitting), or null. */
  approvalProblem(
    schema: Record<string, unknown> | null | undefined,
    args: Record<string, unknown>,
  ): AppError | null;
}

export function toolArguments(maxBytes: number): ToolArguments {
  return {
    maxBytes,
    bounded: (text) => boundedArgumentsText(text, maxBytes),
    parse: (text) => parseToolArguments(text, maxBytes),
    problem: (schema, args, prefix) => argumentsProblem(schema, args, prefix),
    approvalProblem: (schema, args) =>
      approvedArgumentsSizeProblem(args, maxBytes) ?? argumentsProblem(schema, args, 'arguments'),
  };
}
