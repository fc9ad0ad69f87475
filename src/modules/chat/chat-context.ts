// The context of a chat turn: the request's messages split into the system prompt and the turns,
// and, for one model, the messages it is sent (trimmed oldest-first to its window) and its limits.
import type { ModelDefinition } from '../../config/config.js';
import { InvalidParameterError } from '../../errors/app-error.js';
import type { ChatModel, ChatTurn } from '../../models/spec.js';

/** What a turn's context is built from (the chat service's prepared turn). */
export interface TurnMaterial {
  readonly request: {
    readonly maxTokens: number | undefined;
    readonly temperature: number | undefined;
    /** false: a stateless completion, sent as it came (no trimming). */
    readonly persist: boolean;
  };
  readonly systemPrompt: string | null;
  readonly history: readonly ChatTurn[];
  readonly incoming: readonly ChatTurn[];
}

/**
 * The request's system messages (joined into the system prompt) and its other turns; the last
 * turn must be the user's or a tool result.
 */
export function splitTurns(messages: readonly ChatTurn[]): {
  systemParts: string[];
  incoming: ChatTurn[];
} {
  const systemParts: string[] = [];
  const incoming: ChatTurn[] = [];
  for (const message of messages) {
    if (message.role === 'system') systemParts.push(message.content);
    else incoming.push(message);
  }
  const last = incoming[incoming.length - 1];
  if (last === undefined || (last.role !== 'user' && last.role !== 'tool')) {
    throw new InvalidParameterError(
      `messages[${messages.length - 1}].role`,
      "The last message must be the user's (role 'user') or a tool result (role 'tool'); earlier 'assistant' messages are taken as history.",
    );
  }
  return { systemParts, incoming };
}

/**
 * The messages and limits for one model: system prompt and the newest user message always,
 * then as much history as fits in the context window minus the completion budget, newest first.
 */
export async function contextFor(
  prepared: TurnMaterial,
  model: Pick<ChatModel, 'countTokens'>,
  definition: ModelDefinition,
): Promise<{ messages: ChatTurn[]; maxTokens: number; temperature: number | undefined }> {
  const maxTokens = Math.min(
    prepared.request.maxTokens ?? definition.maxTokens,
    definition.maxTokens,
  );
  const system: ChatTurn[] =
    prepared.systemPrompt === null ? [] : [{ role: 'system', content: prepared.systemPrompt }];
  const turns = [...prepared.history, ...prepared.incoming];
  if (!prepared.request.persist) {
    return {
      messages: [...system, ...turns],
      maxTokens,
      temperature: prepared.request.temperature,
    };
  }
  const budget = definition.contextLength - maxTokens;
  const newest = turns[turns.length - 1]!;
  let used = await model.countTokens([...system, newest]);
  if (used > budget) {
    throw new InvalidParameterError(
      'messages',
      `The system prompt and the last message take ${used} tokens, more than the ${budget} that model '${definition.name}' leaves for input (context ${definition.contextLength} − max_tokens ${maxTokens}). Shorten the message or lower max_tokens.`,
    );
  }
  const kept: ChatTurn[] = [newest];
  for (let index = turns.length - 2; index >= 0; index -= 1) {
    const turn = turns[index]!;
    const cost = await model.countTokens([turn]);
    if (used + cost > budget) break;
    used += cost;
    kept.unshift(turn);
  }
  // A context opening on an assistant turn reads as if the model spoke first, and a tool result
  // without the call it answers is refused by providers: drop them.
  while (kept.length > 1 && (kept[0]!.role === 'assistant' || kept[0]!.role === 'tool')) {
    kept.shift();
  }
  return { messages: [...system, ...kept], maxTokens, temperature: prepared.request.temperature };
}
