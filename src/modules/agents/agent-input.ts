// The kinds of value an agent's input fields take: `query` text, `urls` a list of texts,
// `parameters` an object, and `data` as the agent's type reads it. The REST route checks its body
// against a schema, but a pipeline stage's input comes from path mappings over the run's input and
// earlier stages' outputs, which can hold anything; AgentExecutor.prepare checks both with this
// before a type's own checks (which call string methods on `query`) see the input. A number or a
// boolean where text is taken is refused like an object, not turned into text: a mapping that
// yields one most likely points at the wrong field.
import { InvalidParameterError } from '../../errors/app-error.js';

/** A value's kind in words, as refusals put it: 'an object', 'a list', 'a number', 'text' … */
export function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'string') return 'text';
  if (typeof value === 'boolean') return 'a boolean';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/** What an input field takes: its kind in words, and what is wrong with a value (null: fine). */
export interface InputRule {
  readonly takes: string;
  /** Why `value` does not fit, as a phrase (`an object`, `a list with a number at [2]`). */
  misfit(value: unknown): { got: string; at: string } | null;
}

const isObject = (value: unknown): boolean =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function kindRule(takes: string, fits: (value: unknown) => boolean): InputRule {
  return {
    takes,
    misfit: (value) => (fits(value) ? null : { got: kindOf(value), at: '' }),
  };
}

/** A list whose items each fit `item`; the first misfit is named with its index. */
function listRule(takes: string, item: (value: unknown) => boolean): InputRule {
  return {
    takes,
    misfit(value) {
      if (!Array.isArray(value)) return { got: kindOf(value), at: '' };
      const index = value.findIndex((entry) => !item(entry));
      return index === -1
        ? null
        : { got: `a list with ${kindOf(value[index])} at [${index}]`, at: `[${index}]` };
    },
  };
}

export const inputRules = {
  text: kindRule('text', (value) => typeof value === 'string'),
  textList: listRule('a list of texts', (value) => typeof value === 'string'),
  object: kindRule('an object', isObject),
  /** StructureAgent's `data`: CSV text, or rows (the engine names a row that is not an object). */
  table: kindRule(
    'CSV text or a list of objects',
    (value) => typeof value === 'string' || Array.isArray(value),
  ),
} as const;

/** The fields every agent type takes, by the same rule; `data` is each type's (`dataInput`). */
const commonFields: ReadonlyArray<readonly [string, InputRule]> = [
  ['query', inputRules.text],
  ['urls', inputRules.textList],
  ['parameters', inputRules.object],
];

/** An input field holding a value of a kind the agent does not take there. */
export class AgentInputMismatch extends InvalidParameterError {
  constructor(
    /** The input field (`query`). */
    readonly field: string,
    /** What it holds, in words (`an object`). */
    readonly got: string,
    /** What the agent takes there, in words (`text`). */
    readonly takes: string,
    at: string,
  ) {
    super(`${field}${at}`, `'${field}' is ${got}; the agent's '${field}' takes ${takes}.`);
    this.name = 'AgentInputMismatch';
  }

  /** The mismatch told as the stage mapping that produced it (`input_mapping.query ← $.input.x`). */
  describeMapping(name: string, path: string): string {
    const holds = name === this.field ? `is ${this.got}` : `makes '${this.field}' ${this.got}`;
    return `input_mapping.${name} ← ${path} ${holds}; the agent's '${this.field}' takes ${this.takes}`;
  }
}

/** The rules an agent type's input is checked with: the common fields and its `data`, if any. */
function inputFieldRules(dataInput: InputRule | undefined): Map<string, InputRule> {
  const rules = new Map(commonFields);
  if (dataInput !== undefined) rules.set('data', dataInput);
  return rules;
}

/** The first field of `input` whose value the agent does not take there; null when all fit. */
export function findInputMismatch(
  input: object,
  dataInput: InputRule | undefined,
): AgentInputMismatch | null {
  for (const [field, rule] of inputFieldRules(dataInput)) {
    if (!Object.hasOwn(input, field)) continue;
    const value = (input as Record<string, unknown>)[field];
    if (value === undefined) continue;
    const misfit = rule.misfit(value);
    if (misfit !== null) return new AgentInputMismatch(field, misfit.got, rule.takes, misfit.at);
  }
  return null;
}
