// Spans of the platform's own GenAI operations (the GenAI conventions' agent and tool spans):
// `invoke_agent {name}` per agent run, `invoke_workflow {name}` per pipeline run, `execute_tool
// {name}` per tool call, `retrieval {kb}` per knowledge search. Each runs its work inside the span,
// so the model calls and tools it makes are its children. Without telemetry, the work runs as is.
import type * as Api from '@opentelemetry/api';
import { errorTypeOf } from './gen-ai-attributes.js';
import { telemetry } from './otel-runtime.js';

export type SpanAttributes = Record<string, Api.AttributeValue | undefined>;

/** What a finished operation adds to its span: more attributes, and an error type if it failed. */
export interface OperationOutcome {
  readonly attributes?: SpanAttributes;
  readonly errorType?: string | null;
}

function defined(attributes: SpanAttributes): Record<string, Api.AttributeValue> {
  const kept: Record<string, Api.AttributeValue> = {};
  for (const [name, value] of Object.entries(attributes))
    if (value !== undefined) kept[name] = value;
  return kept;
}

/**
 * Runs `work` in a span `{operation} {name}` with `gen_ai.operation.name`; `outcome` reads what
 * its result adds (a tool's failure is a result, not an exception).
 */
export async function traceOperation<T>(
  operation: 'invoke_agent' | 'invoke_workflow' | 'execute_tool' | 'retrieval',
  name: string,
  attributes: SpanAttributes,
  work: () => Promise<T>,
  outcome?: (result: T) => OperationOutcome,
): Promise<T> {
  const rt = telemetry();
  if (rt === null) return work();
  const { api } = rt;
  return rt.tracer.startActiveSpan(
    `${operation} ${name}`,
    {
      kind: api.SpanKind.INTERNAL,
      attributes: defined({ 'gen_ai.operation.name': operation, ...attributes }),
    },
    async (span) => {
      try {
        const result = await work();
        const seen = outcome?.(result);
        if (seen?.attributes !== undefined) span.setAttributes(defined(seen.attributes));
        if (seen?.errorType) {
          span.setAttribute('error.type', seen.errorType);
          span.setStatus({ code: api.SpanStatusCode.ERROR });
        }
        return result;
      } catch (error) {
        span.setAttribute('error.type', errorTypeOf(error));
        span.setStatus({ code: api.SpanStatusCode.ERROR });
        throw error;
      } finally {
        span.end();
      }
    },
  );
}

/** `execute_tool {name}`: one call of a tool a model asked for; a failure it reports is an error. */
export function traceToolCall<T extends { ok: boolean }>(
  box: { call(name: string, args: Record<string, unknown>, signal: AbortSignal): Promise<T> },
  name: string,
  callId: string,
  args: Record<string, unknown>,
  signal: AbortSignal,
): Promise<T> {
  const attributes = {
    'gen_ai.tool.name': name,
    'gen_ai.tool.call.id': callId,
    'gen_ai.tool.type': 'function',
  };
  return traceOperation(
    'execute_tool',
    name,
    attributes,
    () => box.call(name, args, signal),
    (outcome) => ({ errorType: outcome.ok ? null : 'tool_error' }),
  );
}

/** The attributes of `invoke_agent {name}`. */
export function agentRunAttributes(
  agent: { id: string; name: string; agentType: string; modelId: string | null },
  accountId: string,
  model: string | null | undefined,
  executionId: string | null | undefined,
): SpanAttributes {
  return {
    'gen_ai.agent.id': agent.id,
    'gen_ai.agent.name': agent.name,
    'gen_ai.request.model': model ?? agent.modelId ?? undefined,
    'platform.agent.type': agent.agentType,
    'platform.account.id': accountId,
    'platform.execution.id': executionId ?? undefined,
  };
}
