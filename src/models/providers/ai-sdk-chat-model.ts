// A ChatModel over an AI SDK provider model (Anthropic, Google): the request translated by
// ./ai-sdk-translation.ts (tools, images, response formats, sampling; 400 for what the provider
// cannot honour, as ./provider-parameters.ts declares), the call's time limits and retries
// (../upstream/) and the mapping of failures to the contract's 502/503/504
// (./upstream-failure.ts), without letting upstream bodies or secrets through.
import type {
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3StreamPart,
  LanguageModelV3Usage,
} from '@ai-sdk/provider';
import type { RemoteModelDefinition } from '../../config/config.js';
import type { AppError } from '../../errors/app-error.js';
import type { BpeTokenCounter } from '../bpe-token-counter.js';
import {
  UpstreamError,
  type ChatModel,
  type ChatTurn,
  type GenerationRequest,
  type GenerationResult,
  type StreamPart,
  type TokenUsage,
} from '../spec.js';
import { CallLimits } from '../upstream/call-limits.js';
import { withRetries } from '../upstream/retry.js';
import {
  finishReasonOf,
  StreamedToolCalls,
  tokenDetailsOf,
  toolCallsOf,
} from './ai-sdk-results.js';
import type { ImageFetcher, TranslationTarget } from './ai-sdk-target.js';
import { refusalOfWarnings, toCallOptions } from './ai-sdk-translation.js';
import type { AiSdkProvider } from './provider-parameters.js';
import { describeUpstreamFailure, type FailurePhase } from './upstream-failure.js';

/** A call ready to be sent: the provider's model and everything of the call but its signal. */
interface PreparedCall {
  readonly model: LanguageModelV3;
  readonly target: TranslationTarget;
  readonly options: Omit<LanguageModelV3CallOptions, 'abortSignal'>;
}

/** What a stream came to, once its parts stop: a finish, a refusal, a failure, or nothing. */
interface StreamOutcome {
  text: string;
  finished: boolean;
  failure: unknown;
  refusal: AppError | null;
}

/**
 * Calls the provider model through the AI SDK's specification interface (doGenerate/doStream):
 * the provider packages speak each vendor's wire format; the SDK's convenience layer
 * (generateText/streamText) is skipped on this hot path because it costs more CPU per call than
 * the whole rest of a gateway request (see docs/decisions.md).
 */
export class AiSdkChatModel implements ChatModel {
  private loaded: Promise<LanguageModelV3> | undefined;
  private translationTarget: Promise<TranslationTarget> | undefined;

  constructor(
    private readonly definition: RemoteModelDefinition,
    /** Which of the AI SDK's providers the definition names (its `provider`, narrowed). */
    private readonly provider: AiSdkProvider,
    /** Builds the provider's model (importing its package) on the first call. */
    private readonly load: () => Promise<LanguageModelV3>,
    private readonly tokens: BpeTokenCounter,
    /** Fetches the image URLs the provider cannot fetch itself; absent: they are refused. */
    private readonly fetchImage?: ImageFetcher,
  ) {}

  private model(): Promise<LanguageModelV3> {
    this.loaded ??= this.load();
    return this.loaded;
  }

  /** What the translation needs of this model: read once, with the model. */
  private target(): Promise<TranslationTarget> {
    this.translationTarget ??= this.model().then(async (model) => ({
      provider: this.provider,
      modelId: this.definition.model,
      modelName: this.definition.name,
      supportedUrls: await model.supportedUrls,
      fetchImage: this.fetchImage,
    }));
    return this.translationTarget;
  }

  /**
   * Translates the request before any upstream call: a parameter the provider cannot honour is
   * refused here (InvalidParameterError), and image URLs it cannot fetch are fetched here.
   */
  private async prepare(request: GenerationRequest): Promise<PreparedCall> {
    const [model, target] = await Promise.all([this.model(), this.target()]);
    return { model, target, options: await toCallOptions(request, target) };
  }

  /** The usage as reported, the counts the provider left out counted here. */
  private async usageOf(
    usage: LanguageModelV3Usage,
    request: GenerationRequest,
    written: string,
  ): Promise<TokenUsage> {
    return {
      promptTokens: usage.inputTokens.total ?? (await this.countTokens(request.messages)),
      completionTokens: usage.outputTokens.total ?? (await this.tokens.countText(written)),
      ...tokenDetailsOf(usage),
    };
  }

  async generate(request: GenerationRequest): Promise<GenerationResult> {
    const { model, target, options } = await this.prepare(request);
    const limits = new CallLimits(
      request.signal,
      this.definition.timeoutMs,
      null,
      request.attempts,
    );
    let result: Awaited<ReturnType<LanguageModelV3['doGenerate']>>;
    try {
      result = await withRetries(
        () => model.doGenerate({ ...options, abortSignal: limits.signal }),
        limits,
        { maxRetries: this.definition.maxRetries },
      );
    } catch (error) {
      throw limits.explain(error, (cause) => describeUpstreamFailure(this.definition.name, cause));
    } finally {
      limits.dispose();
    }
    const refusal = refusalOfWarnings(result.warnings, request, target);
    if (refusal !== null) throw refusal;
    const text = result.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
    const toolCalls = toolCallsOf(result.content);
    const written = text + (toolCalls ?? []).map((call) => call.function.arguments).join('');
    return {
      text,
      finishReason: finishReasonOf(result.finishReason.unified),
      usage: await this.usageOf(result.usage, request, written),
      ...(toolCalls === undefined ? {} : { toolCalls }),
    };
  }

  async *stream(request: GenerationRequest): AsyncIterable<StreamPart> {
    const { model, target, options } = await this.prepare(request);
    const limits = new CallLimits(
      request.signal,
      this.definition.timeoutMs,
      this.definition.idleTimeoutMs,
      request.attempts,
    );
    let reader: ReadableStreamDefaultReader<LanguageModelV3StreamPart> | undefined;
    const outcome: StreamOutcome = { text: '', finished: false, failure: undefined, refusal: null };
    let phase: FailurePhase = 'request';
    try {
      // Retries cover opening the stream; once text flows, a failure ends it.
      const { stream } = await withRetries(
        () => model.doStream({ ...options, abortSignal: limits.signal }),
        limits,
        { maxRetries: this.definition.maxRetries },
      );
      reader = stream.getReader();
      phase = 'stream';
      yield* this.parts(reader, request, target, limits, outcome);
      if (outcome.finished) return;
    } catch (error) {
      // A connection cut mid-stream surfaces here, as a failed read.
      outcome.failure = error;
    } finally {
      limits.dispose();
      // Ends the upstream call when the consumer stopped reading early or the stream failed.
      limits.cancel();
      await reader?.cancel().catch(() => undefined);
    }
    if (outcome.refusal !== null) throw outcome.refusal;
    const endedEarly = outcome.failure === undefined;
    throw limits.explain(outcome.failure, (cause) =>
      endedEarly
        ? new UpstreamError(
            'upstream_error',
            `The provider of model '${this.definition.name}' ended the stream before finishing the answer; the answer is incomplete.`,
          )
        : describeUpstreamFailure(this.definition.name, cause, phase),
    );
  }

  /** The provider's stream parts as the platform's, until its finish, a refusal or an error. */
  private async *parts(
    reader: ReadableStreamDefaultReader<LanguageModelV3StreamPart>,
    request: GenerationRequest,
    target: TranslationTarget,
    limits: CallLimits,
    outcome: StreamOutcome,
  ): AsyncGenerator<StreamPart> {
    const toolCalls = new StreamedToolCalls();
    while (true) {
      const next = await reader.read();
      if (next.done) return;
      limits.touch();
      const part = next.value;
      if (part.type === 'text-delta') {
        if (part.delta === '') continue;
        outcome.text += part.delta;
        yield { type: 'text', text: part.delta };
      } else if (part.type === 'stream-start') {
        // The SDK's warnings come first, before any answer: a dropped parameter ends it here.
        outcome.refusal = refusalOfWarnings(part.warnings, request, target);
        if (outcome.refusal !== null) return;
      } else if (part.type === 'error') {
        outcome.failure = part.error;
        return;
      } else if (part.type === 'finish') {
        const written = outcome.text + toolCalls.argumentsText();
        const usage = await this.usageOf(part.usage, request, written);
        outcome.finished = true;
        yield { type: 'finish', finishReason: finishReasonOf(part.finishReason.unified), usage };
        return;
      } else {
        yield* toolCalls.translate(part);
      }
    }
  }

  countTokens(messages: readonly ChatTurn[]): Promise<number> {
    return this.tokens.countMessages(messages);
  }
}
