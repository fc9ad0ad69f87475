// Streamed tool-call deltas put back together: the first delta of a call names its index, id and
// function; the later ones append to its arguments (OpenAI's streaming shape, which every provider
// path yields). Bounded by the model's own output limit, as the text is.
import { InvalidParameterError } from '../../errors/app-error.js';
import type { ChatTurn, StreamPart, ToolCall } from '../../models/spec.js';

type ToolCallDelta = Extract<StreamPart, { type: 'tool-call' }>;

export class ToolCallCollector {
  private readonly byIndex = new Map<number, { id: string; name: string; arguments: string }>();

  add(delta: ToolCallDelta): void {
    const call = this.byIndex.get(delta.index);
    if (call === undefined) {
      this.byIndex.set(delta.index, {
        id: delta.id ?? '',
        name: delta.name ?? '',
        arguments: delta.arguments,
      });
      return;
    }
    if (delta.id !== undefined && call.id === '') call.id = delta.id;
    if (delta.name !== undefined && call.name === '') call.name = delta.name;
    call.arguments += delta.arguments;
  }

  /** The calls in index order; undefined when there were none. */
  calls(): ToolCall[] | undefined {
    if (this.byIndex.size === 0) return undefined;
    return [...this.byIndex.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, call]) => ({
        id: call.id,
        type: 'function' as const,
        function: { name: call.name, arguments: call.arguments },
      }));
  }
}

/**
 * Every tool result answers a call an earlier assistant turn made (in the stored history or the
 * request), as every provider requires: else 400 naming the message's `tool_call_id`.
 */
export function checkToolResults(
  history: readonly ChatTurn[],
  messages: readonly ChatTurn[],
): void {
  const calls = new Set<string>();
  for (const turn of history) for (const call of turn.toolCalls ?? []) calls.add(call.id);
  messages.forEach((turn, index) => {
    for (const call of turn.toolCalls ?? []) calls.add(call.id);
    if (turn.role === 'tool' && !calls.has(turn.toolCallId ?? '')) {
      throw new InvalidParameterError(
        `messages[${index}].tool_call_id`,
        `No earlier assistant message made the tool call '${turn.toolCallId ?? ''}' this message answers.`,
      );
    }
  });
}
