// The answers of the AI SDK's providers (Anthropic, Google) in OpenAI's shapes: finish reasons,
// the client's function calls (not the provider's own server tools), cache and reasoning tokens,
// and streamed tool calls as OpenAI's deltas.
import type {
  LanguageModelV3Content,
  LanguageModelV3FinishReason,
  LanguageModelV3StreamPart,
  LanguageModelV3Usage,
} from '@ai-sdk/provider';
import type { FinishReason, StreamPart, ToolCall } from '../spec.js';

type FunctionToolCall = Extract<LanguageModelV3Content, { type: 'tool-call' }>;

export function finishReasonOf(
  reason: LanguageModelV3FinishReason['unified'] | undefined,
): FinishReason {
  if (reason === 'stop' || reason === 'length') return reason;
  if (reason === 'content-filter') return 'content_filter';
  if (reason === 'tool-calls') return 'tool_calls';
  return 'other';
}

/** Calls the provider ran itself (server tools) are not the client's to answer. */
function isClientCall(part: { providerExecuted?: boolean | undefined }): boolean {
  return part.providerExecuted !== true;
}

/** The function calls of a generated answer, in OpenAI's shape (arguments as the JSON text). */
export function toolCallsOf(content: readonly LanguageModelV3Content[]): ToolCall[] | undefined {
  const calls = content
    .filter((part): part is FunctionToolCall => part.type === 'tool-call' && isClientCall(part))
    .map((part) => ({
      id: part.toolCallId,
      type: 'function' as const,
      function: { name: part.toolName, arguments: part.input },
    }));
  return calls.length === 0 ? undefined : calls;
}

/** Cache and reasoning tokens, where the provider reported any (a zero is left out). */
export function tokenDetailsOf(usage: LanguageModelV3Usage): {
  cachedTokens?: number;
  cacheWriteTokens?: number;
  reasoningTokens?: number;
} {
  const cached = usage.inputTokens.cacheRead;
  const written = usage.inputTokens.cacheWrite;
  const reasoning = usage.outputTokens.reasoning;
  return {
    ...(cached !== undefined && cached > 0 ? { cachedTokens: cached } : {}),
    ...(written !== undefined && written > 0 ? { cacheWriteTokens: written } : {}),
    ...(reasoning !== undefined && reasoning > 0 ? { reasoningTokens: reasoning } : {}),
  };
}

type ToolCallDelta = Extract<StreamPart, { type: 'tool-call' }>;

/** One delta: the first of a call names it (id, name), the later ones only append arguments. */
function delta(index: number, text: string, id?: string, name?: string): ToolCallDelta {
  return {
    type: 'tool-call',
    index,
    ...(id === undefined ? {} : { id }),
    ...(name === undefined ? {} : { name }),
    arguments: text,
  };
}

/**
 * Streamed tool calls in OpenAI's delta shape: the first delta of a call carries its index, id and
 * name (arguments ''), later ones its argument fragments; a call that arrives whole (no input
 * deltas) is one delta carrying all its arguments. Indexes count the calls from 0 in order.
 */
export class StreamedToolCalls {
  private readonly calls = new Map<string, { index: number; sent: string }>();
  /** Calls the provider runs itself: their parts are not relayed. */
  private readonly skipped = new Set<string>();

  /** The deltas a provider stream part stands for (none for parts that are not tool calls). */
  translate(part: LanguageModelV3StreamPart): ToolCallDelta[] {
    if (part.type === 'tool-input-start') return this.start(part);
    if (part.type === 'tool-input-delta') return this.append(part.id, part.delta);
    if (part.type === 'tool-call') return this.complete(part);
    return [];
  }

  private start(part: Extract<LanguageModelV3StreamPart, { type: 'tool-input-start' }>) {
    if (!isClientCall(part)) {
      this.skipped.add(part.id);
      return [];
    }
    if (this.calls.has(part.id)) return [];
    const index = this.calls.size;
    this.calls.set(part.id, { index, sent: '' });
    return [delta(index, '', part.id, part.toolName)];
  }

  private append(id: string, text: string): ToolCallDelta[] {
    if (this.skipped.has(id) || text === '') return [];
    const call = this.calls.get(id);
    if (call === undefined) {
      const index = this.calls.size;
      this.calls.set(id, { index, sent: text });
      return [delta(index, text, id)];
    }
    call.sent += text;
    return [delta(call.index, text)];
  }

  private complete(part: FunctionToolCall): ToolCallDelta[] {
    if (!isClientCall(part) || this.skipped.has(part.toolCallId)) return [];
    const call = this.calls.get(part.toolCallId);
    if (call === undefined) {
      const index = this.calls.size;
      this.calls.set(part.toolCallId, { index, sent: part.input });
      return [delta(index, part.input, part.toolCallId, part.toolName)];
    }
    // The complete input may add what the deltas did not carry (`{}` for a call without
    // arguments); it never takes back what they sent.
    if (part.input.length > call.sent.length && part.input.startsWith(call.sent)) {
      const rest = part.input.slice(call.sent.length);
      call.sent = part.input;
      return [delta(call.index, rest)];
    }
    return [];
  }

  /** The arguments streamed so far, joined (for counting tokens when the provider does not). */
  argumentsText(): string {
    return [...this.calls.values()].map((call) => call.sent).join('');
  }
}
