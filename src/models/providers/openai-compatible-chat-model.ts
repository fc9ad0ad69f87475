// The one path for OpenAI and OpenAI-compatible upstreams (vLLM, llama.cpp, Ollama, LM Studio,
// Groq…): the Chat Completions request is the caller's parameters passed through unchanged, with
// the upstream's model id, the turns and the token limit written by the platform (see
// ./openai-compatible-wire.ts), sent over a pooled keep-alive connection (node:http/https); the
// answer is read without fetch emulation or web streams — a JSON answer parsed once, a streamed
// one split into SSE lines as the socket delivers them, text, refusals, tool calls (streamed as
// their deltas come), logprobs, finish reason, usage and system fingerprint picked out and the
// shape checked by hand. A response schema is OpenAI's `response_format` (json_schema where the
// server supports it, else JSON mode): there is no second client for these providers. Failures
// become the same APICallErrors the AI SDK raises, so retries and time limits (../upstream/) and
// the mapping to the contract's errors (./upstream-failure.ts) are shared with the other providers.
// By job: the wire format (./openai-compatible-wire.ts), the connection and its retries
// (./openai-compatible-connection.ts), the stream reader (./openai-compatible-stream.ts); this
// file is the model over them.
import type { IncomingMessage } from 'node:http';
import type { RemoteModelDefinition } from '../../config/config.js';
import type { BpeTokenCounter } from '../bpe-token-counter.js';
import type {
  ChatModel,
  ChatTurn,
  ChunkRelay,
  GenerationRequest,
  GenerationResult,
  StreamPart,
  TokenUsage,
} from '../spec.js';
import { CallLimits } from '../upstream/call-limits.js';
import { UpstreamConnection } from './openai-compatible-connection.js';
import { ChunkRelayReader } from './openai-compatible-relay.js';
import { CompletionStreamReader } from './openai-compatible-stream.js';
import {
  parseCompletion,
  requestBody,
  type BodyOptions,
  type UsageCounts,
} from './openai-compatible-wire.js';
import { describeUpstreamFailure } from './upstream-failure.js';

export { maxAnswerBytes } from './openai-compatible-connection.js';
export { maxStreamLineChars } from './openai-compatible-stream.js';

/** Where provider `openai` is reached when its definition names no base URL. */
export const openAiBaseUrl = 'https://api.openai.com/v1';

/** A relayed stream's generated text when the upstream reported its completion tokens: none needed. */
const noText = { text: '', unkeptChunks: 0 } as const;

export class OpenAiCompatibleChatModel implements ChatModel {
  private readonly connection: UpstreamConnection;
  private readonly plainBody: BodyOptions;
  private readonly streamedBody: BodyOptions;

  constructor(
    private readonly definition: RemoteModelDefinition,
    apiKey: string | undefined,
    private readonly tokens: BpeTokenCounter,
  ) {
    const openAi = definition.provider === 'openai';
    this.connection = new UpstreamConnection(
      definition.baseUrl ?? (openAi ? openAiBaseUrl : null),
      apiKey,
    );
    // OpenAI's reasoning models refuse `max_tokens`; every OpenAI model takes the newer field.
    const maxTokensField = openAi ? 'max_completion_tokens' : 'max_tokens';
    const { structuredOutputs } = definition;
    this.plainBody = { stream: false, maxTokensField, structuredOutputs };
    this.streamedBody = { stream: true, maxTokensField, structuredOutputs };
  }

  /**
   * The usage as reported, the parts the upstream left out counted here: the completion from
   * `text`, plus `uncountedTokens` (a relayed stream's chunks whose text was not kept).
   */
  private async usageOf(
    usage: UsageCounts,
    request: GenerationRequest,
    text: string,
    uncountedTokens = 0,
  ): Promise<TokenUsage> {
    const promptTokens = usage.promptTokens ?? (await this.countTokens(request.messages));
    // Counted (when not reported): the text, and a token for each event not kept.
    const completionTokens =
      usage.completionTokens ?? (await this.tokens.countText(text)) + uncountedTokens;
    // One shape whatever the upstream reported (a detail it left out is undefined): usage objects
    // of several shapes made the code that reads them look each field up in V8's runtime.
    return {
      promptTokens,
      completionTokens,
      cachedTokens: usage.cachedTokens,
      reasoningTokens: usage.reasoningTokens,
    };
  }

  async generate(request: GenerationRequest): Promise<GenerationResult> {
    const limits = new CallLimits(
      request.signal,
      this.definition.timeoutMs,
      null,
      request.attempts,
    );
    try {
      const { connection } = this;
      const incoming = await connection.open(
        requestBody(this.definition.model, request, this.plainBody),
        limits,
        this.definition.maxRetries,
      );
      const raw = await connection.readWhole(incoming);
      const answer = parseCompletion(raw, (cause) => connection.unreadable(incoming, raw, cause));
      // The completion's own count covers the calls' arguments; counted here only when missing.
      const counted =
        answer.text + (answer.toolCalls?.map((call) => call.function.arguments).join('') ?? '');
      return {
        text: answer.text,
        finishReason: answer.finishReason,
        usage: await this.usageOf(answer.usage, request, counted),
        ...(answer.toolCalls === undefined ? {} : { toolCalls: answer.toolCalls }),
        ...(answer.refusal === undefined ? {} : { refusal: answer.refusal }),
        ...(answer.logprobs === undefined ? {} : { logprobs: answer.logprobs }),
        ...(answer.systemFingerprint === undefined
          ? {}
          : { systemFingerprint: answer.systemFingerprint }),
      };
    } catch (error) {
      throw limits.explain(error, (cause) => describeUpstreamFailure(this.definition.name, cause));
    } finally {
      limits.dispose();
    }
  }

  async *stream(request: GenerationRequest): AsyncIterable<StreamPart> {
    const limits = new CallLimits(
      request.signal,
      this.definition.timeoutMs,
      this.definition.idleTimeoutMs,
      request.attempts,
    );
    let incoming: IncomingMessage | undefined;
    let finished = false;
    let phase: 'request' | 'stream' = 'request';
    // What the completion count is taken from when the upstream reports none.
    let generated = '';
    try {
      incoming = await this.connection.open(
        requestBody(this.definition.model, request, this.streamedBody),
        limits,
        this.definition.maxRetries,
      );
      phase = 'stream';
      incoming.setEncoding('utf8');
      if (request.relay !== undefined) {
        yield* this.relayed(incoming, request, request.relay, limits);
        finished = true;
        return;
      }
      const reader = new CompletionStreamReader();
      for await (const chunk of incoming) {
        limits.touch();
        for (const part of reader.read(chunk as string)) {
          generated += part.type === 'tool-call' ? part.arguments : part.text;
          yield part;
        }
        reader.throwIfFailed();
      }
      for (const part of reader.end()) {
        generated += part.type === 'tool-call' ? part.arguments : part.text;
        yield part;
      }
      reader.throwIfFailed();
      finished = true;
      const finishReason = reader.finishReason();
      if (finishReason === null) throw new Error('Response stream ended without a finish reason.');
      const usage = await this.usageOf(reader.usage, request, generated);
      const { systemFingerprint } = reader;
      yield systemFingerprint === undefined
        ? { type: 'finish', finishReason, usage }
        : { type: 'finish', finishReason, usage, systemFingerprint };
    } catch (error) {
      throw limits.explain(error, (cause) =>
        describeUpstreamFailure(this.definition.name, cause, phase),
      );
    } finally {
      limits.dispose();
      // The consumer stopped early or the stream failed: the connection is not reused.
      if (!finished) incoming?.destroy();
    }
  }

  /**
   * The answer's events as they came (./openai-compatible-relay.ts), a part per piece the socket
   * delivered, then the finish with the usage the events reported (counted here when they did not).
   */
  private async *relayed(
    incoming: IncomingMessage,
    request: GenerationRequest,
    relay: ChunkRelay,
    limits: CallLimits,
  ): AsyncGenerator<StreamPart> {
    const reader = new ChunkRelayReader(this.definition.name, relay);
    for await (const chunk of incoming) {
      limits.touch();
      const part = reader.read(chunk as string);
      if (part !== null) yield part;
      reader.throwIfFailed();
    }
    const last = reader.end();
    if (last !== null) yield last;
    reader.throwIfFailed();
    const { parser } = reader;
    const finishReason = parser.finishReason();
    if (finishReason === null) throw new Error('Response stream ended without a finish reason.');
    // Completion tokens the upstream did not report are counted from the text relayed.
    const { text, unkeptChunks } =
      parser.usage.completionTokens === undefined ? reader.generated() : noText;
    const usage = await this.usageOf(parser.usage, request, text, unkeptChunks);
    const usageFrames = reader.usageFrames(usage);
    if (usageFrames !== null) yield usageFrames;
    const { systemFingerprint } = parser;
    yield systemFingerprint === undefined
      ? { type: 'finish', finishReason, usage }
      : { type: 'finish', finishReason, usage, systemFingerprint };
  }

  countTokens(messages: readonly ChatTurn[]): Promise<number> {
    return this.tokens.countMessages(messages);
  }
}
