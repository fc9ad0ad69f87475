// One chat turn, streamed or not: resolves the conversation and model, builds the context (system
// prompt from the template, stored history, the new turns), trims it oldest-first to the model's
// window, calls the model with its fallbacks, and stores both turns once the answer is complete —
// a new conversation with them, so a first turn that fails or is abandoned leaves nothing behind.
import type { ModelDefinition } from '../../config/config.js';
import type { ConversationService } from '../conversations/conversation-service.js';
import { AppError, InvalidParameterError } from '../../errors/app-error.js';
import { newId } from '../../ids.js';
import type { ModelRegistry } from '../../models/model-registry.js';
import {
  RequestAbortedError,
  UpstreamError,
  type ChatModel,
  type ChatTurn,
  type FinishReason,
  type StreamPart,
  type TokenUsage,
  type ToolCall,
} from '../../models/spec.js';
import { checkToolResults, ToolCallCollector } from './tool-call-collector.js';
import { contextFor, splitTurns } from './chat-context.js';
import { turnOfStored } from '../../models/openai-messages.js';
import { checkStorable, storedFieldsOf } from './chat-messages.js';
import {
  canServe,
  capabilityNeeds,
  requireCapabilities,
  type CapabilityNeed,
} from '../../models/capabilities.js';
import type { Conversation, NewMessage } from '../conversations/conversation.js';

/** How many stored messages are read as the context of a turn (then trimmed by tokens). */
const historyWindow = 200;

import { attributionOfChat, type ChatRequest } from './chat-request.js';

export { attributionOfChat, type ChatRequest };

export interface ChatOutcome {
  text: string;
  finishReason: FinishReason;
  usage: TokenUsage;
  /** The model that answered (a fallback when the requested one failed). */
  model: ModelDefinition;
  conversationId: string | null;
  messageId: string;
  latencyMs: number;
  /** The function calls the model asked for (finish reason `tool_calls`). */
  toolCalls?: readonly ToolCall[] | undefined;
  refusal?: string | undefined;
  logprobs?: unknown;
  systemFingerprint?: string | undefined;
}

/** What an answer holds, as stored and reported. */
interface Answer {
  text: string;
  finishReason: FinishReason;
  usage: TokenUsage;
  toolCalls?: readonly ToolCall[] | undefined;
}

export type ChatStreamEvent =
  | {
      type: 'start';
      conversationId: string | null;
      messageId: string;
      model: ModelDefinition;
      /** The answer comes as the upstream's own chunks (`relayed` events; ChatRequest `relay`). */
      relayed?: boolean;
    }
  | { type: 'relayed'; frames: string }
  | { type: 'delta'; text: string; logprobs?: unknown }
  | { type: 'refusal'; text: string }
  | {
      type: 'tool-call';
      index: number;
      id?: string | undefined;
      name?: string | undefined;
      arguments: string;
    }
  | { type: 'end'; outcome: ChatOutcome }
  | { type: 'error'; error: AppError };

interface PreparedChat {
  request: ChatRequest;
  /** The stored conversation, or a drafted one (`isNewConversation`), or none (stateless). */
  conversation: Conversation | null;
  isNewConversation: boolean;
  modelName: string;
  systemPrompt: string | null;
  history: ChatTurn[];
  incoming: ChatTurn[];
  messageId: string;
  startedAt: number;
  /** What the request needs of its model beyond text (fallbacks lacking it are skipped). */
  needs: CapabilityNeed[];
}

export interface ChatServiceOptions {
  models: ModelRegistry;
  conversations: ConversationService;
  now?: () => number;
  /**
   * Longest inline data (a data URL, base64 audio or file) a stored turn keeps, in bytes; a turn
   * to be stored with more answers 413 before the model is called. Default 5 MiB.
   */
  maxStoredDataUrlBytes?: number;
}

/** `chat.max_stored_data_url_bytes` by default. */
export const defaultMaxStoredDataUrlBytes = 5 * 1024 * 1024;

export class ChatService {
  private readonly now: () => number;

  constructor(private readonly options: ChatServiceOptions) {
    this.now = options.now ?? Date.now;
  }

  async complete(request: ChatRequest): Promise<ChatOutcome> {
    const prepared = await this.prepare(request);
    const { result, definition } = await this.options.models.withFallbacks(
      prepared.modelName,
      async (model, candidate) => {
        const context = await contextFor(prepared, model, candidate);
        // Every field named, not the context spread and more added: a spread's copy takes each
        // added field through V8's runtime on every call (bench/results/gateway-profile.md).
        return model.generate({
          messages: context.messages,
          maxTokens: context.maxTokens,
          temperature: context.temperature,
          signal: request.signal,
          fairnessKey: request.accountId,
          params: request.params,
          attribution: attributionOfChat(request),
          cache: request.cache,
        });
      },
      (candidate) => canServe(candidate, prepared.needs),
    );
    const conversationId = await this.persist(prepared, definition, {
      text: result.text,
      finishReason: result.finishReason,
      usage: result.usage,
      toolCalls: result.toolCalls,
    });
    // One shape for every outcome (each field named, absent ones undefined), not the result
    // spread and more added.
    return {
      text: result.text,
      finishReason: result.finishReason,
      usage: result.usage,
      model: definition,
      conversationId,
      messageId: prepared.messageId,
      latencyMs: this.now() - prepared.startedAt,
      toolCalls: result.toolCalls,
      refusal: result.refusal,
      logprobs: result.logprobs,
      systemFingerprint: result.systemFingerprint,
    };
  }

  /**
   * Validates and opens the stream before yielding anything, so that a request that cannot be
   * answered fails with a plain error response; once `start` is yielded, failures become an
   * `error` event.
   */
  async openStream(request: ChatRequest): Promise<AsyncGenerator<ChatStreamEvent>> {
    const prepared = await this.prepare(request);
    const opened = await this.options.models.openStream(
      prepared.modelName,
      (model, definition) => this.streamFrom(prepared, model, definition),
      (candidate) => canServe(candidate, prepared.needs),
    );
    return this.relay(prepared, opened.definition, opened.first, opened.rest);
  }

  private async *streamFrom(
    prepared: PreparedChat,
    model: ChatModel,
    definition: ModelDefinition,
  ): AsyncIterable<StreamPart> {
    const context = await contextFor(prepared, model, definition);
    yield* model.stream({
      messages: context.messages,
      maxTokens: context.maxTokens,
      temperature: context.temperature,
      signal: prepared.request.signal,
      fairnessKey: prepared.request.accountId,
      params: prepared.request.params,
      attribution: attributionOfChat(prepared.request),
      cache: prepared.request.cache,
      // Relayed events carry no text to store: only a stateless turn relays them.
      relay: prepared.request.persist ? undefined : prepared.request.relay,
    });
  }

  private async *relay(
    prepared: PreparedChat,
    definition: ModelDefinition,
    first: StreamPart,
    rest: AsyncIterator<StreamPart>,
  ): AsyncGenerator<ChatStreamEvent> {
    yield {
      type: 'start',
      conversationId: prepared.conversation?.id ?? null,
      messageId: prepared.messageId,
      model: definition,
      relayed: first.type === 'relayed',
    };
    let text = '';
    let refusal: string | undefined;
    const toolCalls = new ToolCallCollector();
    let part: StreamPart | undefined = first;
    try {
      while (part !== undefined) {
        if (part.type === 'text') {
          text += part.text;
          yield part.logprobs === undefined
            ? { type: 'delta', text: part.text }
            : { type: 'delta', text: part.text, logprobs: part.logprobs };
        } else if (part.type === 'tool-call') {
          toolCalls.add(part);
          yield part;
        } else if (part.type === 'refusal') {
          refusal = (refusal ?? '') + part.text;
          yield part;
        } else if (part.type === 'relayed') {
          yield { type: 'relayed', frames: part.frames };
        } else {
          const calls = toolCalls.calls();
          const conversationId = await this.persist(prepared, definition, {
            text,
            finishReason: part.finishReason,
            usage: part.usage,
            toolCalls: calls,
          });
          yield {
            type: 'end',
            outcome: {
              text,
              finishReason: part.finishReason,
              usage: part.usage,
              model: definition,
              conversationId,
              messageId: prepared.messageId,
              latencyMs: this.now() - prepared.startedAt,
              toolCalls: calls,
              refusal,
              systemFingerprint: part.systemFingerprint,
            },
          };
          return;
        }
        const next = await rest.next();
        part = next.done === true ? undefined : next.value;
      }
      throw new UpstreamError(
        'upstream_error',
        `Model '${definition.name}' ended its answer early.`,
      );
    } catch (error) {
      if (error instanceof RequestAbortedError || prepared.request.signal.aborted) return;
      yield {
        type: 'error',
        error:
          error instanceof AppError
            ? error
            : new UpstreamError('upstream_error', 'The answer could not be completed.', {
                cause: error,
              }),
      };
    } finally {
      // Stops the model when the consumer leaves early (the client disconnected).
      await rest.return?.();
    }
  }

  private async prepare(request: ChatRequest): Promise<PreparedChat> {
    if (request.persist) {
      checkStorable(
        request.messages,
        this.options.maxStoredDataUrlBytes ?? defaultMaxStoredDataUrlBytes,
      );
    }
    const { systemParts, incoming } = splitTurns(request.messages);

    let conversation: Conversation | null = null;
    const isNewConversation = request.persist && request.conversationId === null;
    if (request.conversationId !== null) {
      conversation = await this.options.conversations.get(
        request.accountId,
        request.conversationId,
        request.userId,
      );
    } else if (isNewConversation) {
      conversation = this.options.conversations.draft(request.accountId, {
        userId: request.userId,
        model: request.model,
      });
    }

    const modelName = this.options.models.resolveChatModelName(
      request.model ?? conversation?.model ?? undefined,
    );
    const definition = this.options.models.definitionOf(modelName);
    const needs = capabilityNeeds(request.messages, request.params);
    requireCapabilities(definition, needs);
    if (request.maxTokens !== undefined && request.maxTokens > definition.maxTokens) {
      throw new InvalidParameterError(
        request.maxTokensParam ?? 'max_tokens',
        `'${request.maxTokensParam ?? 'max_tokens'}' is ${request.maxTokens}, above model '${modelName}''s maximum of ${definition.maxTokens}.`,
      );
    }

    const history =
      conversation === null || isNewConversation
        ? []
        : (await this.options.conversations.recentHistory(conversation, historyWindow))
            .filter((message) => message.role !== 'system')
            .map(turnOfStored);
    checkToolResults(history, request.messages);
    const systemPrompt =
      systemParts.length > 0
        ? systemParts.join('\n\n')
        : conversation === null
          ? null
          : this.options.conversations.systemPromptOf(conversation);

    return {
      request,
      conversation,
      isNewConversation,
      modelName,
      systemPrompt,
      history,
      incoming,
      messageId: newId('msg'),
      startedAt: this.now(),
      needs,
    };
  }

  /** Stores the new turns and the answer together; returns the conversation id (null: stateless). */
  private async persist(
    prepared: PreparedChat,
    definition: ModelDefinition,
    answer: Answer,
  ): Promise<string | null> {
    const { conversation } = prepared;
    if (conversation === null) return null;
    const requestTime = new Date(prepared.startedAt).toISOString();
    // Each turn as it was sent (parts, tool calls, the call a tool result answers), so that the
    // history replays exactly.
    const messages: NewMessage[] = prepared.incoming.map((turn) => ({
      id: newId('msg'),
      ...storedFieldsOf(turn),
      model: null,
      promptTokens: null,
      completionTokens: null,
      latencyMs: null,
      finishReason: null,
      createdAt: requestTime,
      apiKeyId: prepared.request.apiKeyId ?? null,
    }));
    messages.push({
      id: prepared.messageId,
      ...storedFieldsOf({ role: 'assistant', content: answer.text, toolCalls: answer.toolCalls }),
      model: definition.name,
      promptTokens: answer.usage.promptTokens,
      completionTokens: answer.usage.completionTokens,
      latencyMs: this.now() - prepared.startedAt,
      finishReason: answer.finishReason,
      createdAt: new Date(this.now()).toISOString(),
      apiKeyId: prepared.request.apiKeyId ?? null,
    });
    const firstUser = prepared.incoming.find((turn) => turn.role === 'user');
    const stored = await this.options.conversations.appendTurn(conversation, messages, {
      isNew: prepared.isNewConversation,
      firstUserText: firstUser?.content,
    });
    if (stored === undefined) {
      // Deleted while the model was answering: the answer is still returned, nothing is kept.
      throw new AppError(
        'conflict',
        `Conversation '${conversation.id}' was deleted during this request.`,
      );
    }
    return conversation.id;
  }
}
