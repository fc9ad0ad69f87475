// The lean path for OpenAI-compatible upstreams (vLLM, llama.cpp, Ollama, LM Studio, Groq…): the
// Chat Completions request is written straight from the turns with the upstream's model id, sent
// over a pooled keep-alive connection (node:http/https), and the answer is read without fetch
// emulation or web streams — a JSON answer parsed once, a streamed one split into SSE lines as
// the socket delivers them, with text, finish reason and usage picked out and the shape checked
// by hand. Failures become the same APICallErrors the AI SDK raises, so retries (./retry.ts) and
// the mapping to the contract's errors (describeUpstreamFailure) are shared with the other
// providers. Structured output (a response schema) still goes through the AI SDK model.
// By job: the wire format (./openai-compatible-wire.ts), the connection and its retries
// (./openai-compatible-connection.ts), the stream reader (./openai-compatible-stream.ts), the
// call's time limits (./call-limits.ts); this file is the model over them.
import type { IncomingMessage } from 'node:http';
import type { LanguageModelV3 } from '@ai-sdk/provider';
import type { RemoteModelDefinition } from '../../config/config.js';
import type { BpeTokenCounter } from '../bpe-token-counter.js';
import type {
  ChatModel,
  ChatTurn,
  GenerationRequest,
  GenerationResult,
  StreamPart,
} from '../spec.js';
import { AiSdkChatModel, describeUpstreamFailure } from './ai-sdk-chat-model.js';
import { CallLimits } from './call-limits.js';
import { UpstreamConnection } from './openai-compatible-connection.js';
import { CompletionStreamReader } from './openai-compatible-stream.js';
import { parseCompletion, requestBody, type UsageCounts } from './openai-compatible-wire.js';

export { maxAnswerBytes } from './openai-compatible-connection.js';
export { maxStreamLineChars } from './openai-compatible-stream.js';

export class OpenAiCompatibleChatModel implements ChatModel {
  private readonly connection: UpstreamConnection;

  constructor(
    private readonly definition: RemoteModelDefinition,
    apiKey: string | undefined,
    private readonly tokens: BpeTokenCounter,
    /** Builds the AI SDK model for what this path does not do (structured output). */
    private readonly sdkModel: () => Promise<LanguageModelV3>,
  ) {
    this.connection = new UpstreamConnection(definition.baseUrl, apiKey);
  }

  private sdk: AiSdkChatModel | undefined;

  private structured(): AiSdkChatModel {
    this.sdk ??= new AiSdkChatModel(this.definition, this.sdkModel, this.tokens);
    return this.sdk;
  }

  private body(request: GenerationRequest, stream: boolean): string {
    return requestBody(this.definition.model, request, stream);
  }

  /** The usage as reported, the parts the upstream left out counted here. */
  private async usageOf(usage: UsageCounts, request: GenerationRequest, text: string) {
    return {
      promptTokens: usage.promptTokens ?? (await this.countTokens(request.messages)),
      completionTokens: usage.completionTokens ?? (await this.tokens.countText(text)),
    };
  }

  async generate(request: GenerationRequest): Promise<GenerationResult> {
    if (request.responseSchema !== undefined) return this.structured().generate(request);
    const limits = new CallLimits(request.signal, this.definition.timeoutMs, null);
    try {
      const { connection } = this;
      const incoming = await connection.open(
        this.body(request, false),
        limits,
        this.definition.maxRetries,
      );
      const raw = await connection.readWhole(incoming);
      const answer = parseCompletion(raw, (cause) => connection.unreadable(incoming, raw, cause));
      return {
        text: answer.text,
        finishReason: answer.finishReason,
        usage: await this.usageOf(answer.usage, request, answer.text),
      };
    } catch (error) {
      throw limits.explain(error, (cause) => describeUpstreamFailure(this.definition.name, cause));
    } finally {
      limits.dispose();
    }
  }

  async *stream(request: GenerationRequest): AsyncIterable<StreamPart> {
    if (request.responseSchema !== undefined) {
      yield* this.structured().stream(request);
      return;
    }
    const limits = new CallLimits(
      request.signal,
      this.definition.timeoutMs,
      this.definition.idleTimeoutMs,
    );
    let incoming: IncomingMessage | undefined;
    let finished = false;
    let phase: 'request' | 'stream' = 'request';
    let text = '';
    try {
      incoming = await this.connection.open(
        this.body(request, true),
        limits,
        this.definition.maxRetries,
      );
      phase = 'stream';
      incoming.setEncoding('utf8');
      const reader = new CompletionStreamReader();
      for await (const chunk of incoming) {
        limits.touch();
        for (const delta of reader.read(chunk as string)) {
          text += delta;
          yield { type: 'text', text: delta };
        }
        reader.throwIfFailed();
      }
      for (const delta of reader.end()) {
        text += delta;
        yield { type: 'text', text: delta };
      }
      reader.throwIfFailed();
      finished = true;
      const finishReason = reader.finishReason();
      if (finishReason === null) throw new Error('Response stream ended without a finish reason.');
      yield {
        type: 'finish',
        finishReason,
        usage: await this.usageOf(reader.usage, request, text),
      };
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

  countTokens(messages: readonly ChatTurn[]): Promise<number> {
    return this.tokens.countMessages(messages);
  }
}
