// The steps of a tool-calling agent (ToolAgent), in order: each model turn (its text and the calls it
// proposed) and each tool call (its arguments, its result as fed back to the model, the person's
// decision when it needed one).
import { Code, Group, Paper, Stack, Text } from '@mantine/core';
import { formatDate } from '../../components/common';
import { StatusBadge } from '../../components/StatusBadge';
import type { StepRecord } from './types';

/** Long lines wrap: a block that scrolls sideways would be a scroll area the keyboard cannot reach. */
const wrapped = { whiteSpace: 'pre-wrap', overflowWrap: 'anywhere' } as const;

/** How much of a step's output is shown: results may be long (up to tools.max_result_chars). */
export const shownOutputChars = 2000;

function bounded(text: string): string {
  if (text.length <= shownOutputChars) return text;
  const rest = text.length - shownOutputChars;
  return `${text.slice(0, shownOutputChars)}\n… (${rest.toLocaleString()} more characters)`;
}

/** A field the answer shows cut (`{truncated, bytes, preview}`): its preview, said to be one. */
function truncatedText(field: StepRecord['output']): string | null {
  if (field?.truncated !== true || typeof field.preview !== 'string') return null;
  const bytes = typeof field.bytes === 'number' ? field.bytes.toLocaleString() : '?';
  return `${field.preview}\n… (cut: ${bytes} bytes in all; GET the step for the whole of it)`;
}

/** The readable part of an output: its `content` text, else the whole output as JSON. */
function outputText(output: StepRecord['output']): string | null {
  if (output === null) return null;
  const cut = truncatedText(output);
  if (cut !== null) return cut;
  if (typeof output.content === 'string') return output.content;
  if (output.content === null || output.content === undefined) return null;
  return JSON.stringify(output.content, null, 2);
}

/** The names of the calls a model turn proposed (`tool_calls`, as the model gave them). */
function proposedCalls(output: StepRecord['output']): string[] {
  const calls = output?.tool_calls;
  if (!Array.isArray(calls)) return [];
  return calls.map((call) => {
    const name = (call as { function?: { name?: unknown } } | null)?.function?.name;
    return typeof name === 'string' ? name : '?';
  });
}

function Decision({ decision }: { decision: NonNullable<StepRecord['decision']> }) {
  const when = formatDate(decision.decided_at);
  if (decision.decision === 'approved') {
    return (
      <Text size="sm" data-testid="step-decision">
        Approved{decision.edited ? ' with edited arguments' : ' as proposed'} · {when}
      </Text>
    );
  }
  return (
    <Text size="sm" data-testid="step-decision">
      Rejected{decision.reason === null ? '' : `: ${decision.reason}`} · {when}
    </Text>
  );
}

function StepView({ step, number }: { step: StepRecord; number: number }) {
  const kind = step.kind === 'model' ? 'Model turn' : 'Tool call';
  const text = outputText(step.output);
  const calls = step.kind === 'model' ? proposedCalls(step.output) : [];
  const failedCall = step.kind === 'tool' && step.output?.ok === false;
  return (
    <Paper
      withBorder
      p="sm"
      component="article"
      aria-label={`Step ${number}: ${kind.toLowerCase()} ${step.name}`}
      data-testid={`step-${step.kind}`}
      data-status={step.status}
    >
      <Stack gap={6}>
        <Group gap="xs">
          <Text fw={600}>
            {number}. {kind} · {step.name}
          </Text>
          <StatusBadge status={step.status} />
          <Text size="sm">
            {step.duration_ms ?? '—'} ms
            {step.kind === 'model' ? ` · ${step.tokens_used} tokens` : ''}
          </Text>
        </Group>
        {step.decision && <Decision decision={step.decision} />}
        {step.error && <Text c="red">{step.error}</Text>}
        {step.arguments !== null && (
          <>
            <Text size="sm" fw={600}>
              Arguments
            </Text>
            <Code block style={wrapped} data-testid="step-arguments">
              {truncatedText(step.arguments) ?? JSON.stringify(step.arguments, null, 2)}
            </Code>
          </>
        )}
        {calls.length > 0 && <Text size="sm">Proposed calls: {calls.join(', ')}</Text>}
        {text !== null && text !== '' && (
          <>
            <Text size="sm" fw={600}>
              {step.kind === 'model' ? 'Text' : failedCall ? 'Result (an error)' : 'Result'}
            </Text>
            <Code block style={wrapped} data-testid="step-output">
              {bounded(text)}
            </Code>
          </>
        )}
      </Stack>
    </Paper>
  );
}

/** `steps` in their order, numbered from 1 within the list. */
export function StepsList({ steps }: { steps: readonly StepRecord[] }) {
  return (
    <Stack gap="xs">
      {steps.map((step, index) => (
        <StepView key={step.id} step={step} number={index + 1} />
      ))}
    </Stack>
  );
}
