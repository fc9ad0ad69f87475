// The end of an answer in Anthropic's terms: its stop reason, from the chat service's finish
// reason, and its usage.
import type { FinishReason, TokenUsage } from '../../models/spec.js';

export type StopReason = 'end_turn' | 'max_tokens' | 'tool_use' | 'refusal';

export function anthropicStopReason(reason: FinishReason): StopReason {
  switch (reason) {
    case 'length':
      return 'max_tokens';
    case 'tool_calls':
      return 'tool_use';
    case 'content_filter':
      return 'refusal';
    case 'stop':
    case 'other':
      return 'end_turn';
  }
}

/** Anthropic's usage: its input excludes the tokens its cache served (reported apart). */
export function anthropicUsage(usage: TokenUsage) {
  const cached = usage.cachedTokens;
  return {
    input_tokens: Math.max(0, usage.promptTokens - (cached ?? 0)),
    output_tokens: usage.completionTokens,
    ...(cached === undefined ? {} : { cache_read_input_tokens: cached }),
  };
}
