// A stage's agent takes text in `query`, a list of texts in `urls`, an object in `parameters` and
// its type's kind of `data` (src/modules/agents/agent-input.ts, checked by AgentExecutor.prepare).
// A pipeline tells which mapping put the wrong kind of value there: a value taken straight from the
// run's input is refused when the run is started (a 400 naming the input and the mapping, nothing
// recorded); one from an earlier stage's output fails the stage with `invalid_parameter`.
import { InvalidParameterError } from '../../errors/app-error.js';
import type { AgentInputMismatch } from '../agents/agent-input.js';
import { executionError, type ExecutionError } from '../../errors/execution-error.js';
import { parsePath, valueAt, type PathExpression, type PathStep } from './path-expression.js';
import type { PipelineStage } from './pipeline.js';

/** The input fields whose kind is checked, by their mapping's exact name. */
const checkedFields = new Set(['query', 'urls', 'parameters', 'data']);

/** The input_mapping entry that built `field` of a stage's input (`query`, or `query.text`). */
function mappingFor(stage: PipelineStage, field: string): [string, string] | null {
  for (const entry of Object.entries(stage.input_mapping)) {
    if (entry[0] === field || entry[0].startsWith(`${field}.`)) return entry;
  }
  return null;
}

/** The stage's failure for a value of the wrong kind, naming the mapping that produced it. */
export function mismatchFailure(
  stage: PipelineStage,
  mismatch: AgentInputMismatch,
): ExecutionError {
  const mapping = mappingFor(stage, mismatch.field);
  if (mapping === null) {
    return executionError('invalid_parameter', mismatch.message, { param: mismatch.param });
  }
  const [name, path] = mapping;
  return executionError('invalid_parameter', mismatch.describeMapping(name, path), {
    param: `input_mapping.${name}`,
    path,
  });
}

/** A run input's path as a parameter: `topic`, `options.query`, `items[0]`. */
function inputParam(steps: readonly PathStep[]): string {
  return steps
    .map((step, index) =>
      typeof step === 'number' ? `[${step}]` : index === 0 ? step : `.${step}`,
    )
    .join('');
}

function parsedOrNull(text: string): PathExpression | null {
  try {
    return parsePath(text);
  } catch {
    // A stored path that no longer parses fails the run before any stage runs (run-stages.ts).
    return null;
  }
}

/**
 * How a stage's agent takes an input: the mismatch of `input`'s field (AgentExecutor's check), or
 * null. `data` is the agent type's own, so only its check needs the stage's agent.
 */
export type StageInputCheck = (
  stage: PipelineStage,
  input: Record<string, unknown>,
) => Promise<AgentInputMismatch | null>;

/**
 * Refuses a run whose input puts a value of the wrong kind into a stage's `query`, `urls`,
 * `parameters` or `data` through a mapping straight from the run's input (`query ← $.input.topic`):
 * a 400 naming the input and the mapping.
 */
export async function refuseMisfitRunInputs(
  stages: readonly PipelineStage[],
  inputs: Record<string, unknown>,
  check: StageInputCheck,
): Promise<void> {
  for (const stage of stages) {
    for (const [name, text] of Object.entries(stage.input_mapping)) {
      if (!checkedFields.has(name)) continue;
      const path = parsedOrNull(text);
      if (path === null || path.root !== 'input') continue;
      const value = valueAt(inputs, path.steps);
      // An input that is not there fails the stage as unresolved, when it runs.
      if (value === undefined) continue;
      const mismatch = await check(stage, { [name]: value });
      if (mismatch === null) continue;
      const param = inputParam(path.steps);
      throw new InvalidParameterError(
        param,
        `The input '${param}' does not fit stage '${stage.name}': ${mismatch.describeMapping(name, text)}.`,
      );
    }
  }
}
