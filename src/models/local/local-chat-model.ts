// Chat and embeddings on a GGUF model loaded in this process by node-llama-cpp. Each request
// takes one context sequence through the fair queue, renders the conversation with the model's
// own chat template (tool calls and results included), and meters tokens with the model's own
// tokenizer. Structured output and forced function calls are grammars; free function calls are
// node-llama-cpp's function calling, returned to the client rather than executed.
import { signalOf } from '../../net/hang-up.js';
import type {
  ChatWrapper,
  GbnfJsonSchema,
  LlamaContext,
  LlamaEmbeddingContext,
  LlamaGrammar,
  LlamaModel,
} from 'node-llama-cpp';
import type { LocalModelDefinition } from '../../config/config.js';
import { InvalidParameterError } from '../../errors/app-error.js';
import {
  RequestAbortedError,
  UpstreamError,
  type ChatModel,
  type ChatTurn,
  type EmbeddingModel,
  type EmbeddingResult,
  type FinishReason,
  type GenerationRequest,
  type GenerationResult,
  type StreamPart,
  type ToolCall,
} from '../spec.js';
import type { FairQueue } from './fair-queue.js';
import { countTokensGently } from '../token-budget.js';
import {
  forcedCallOf,
  newToolCallId,
  planLocalGeneration,
  type LocalPlan,
} from './local-request.js';
import {
  ChunkChannel,
  generationOptions,
  type ChatResponse,
  type GenerationEnd,
  type StartedGeneration,
} from './local-generation.js';

/** Tokens a message's ChatML framing adds around its text (`<|im_start|>role\n … <|im_end|>\n`). */
const perMessageFraming = 5;

export interface LoadedLocalModel {
  model: LlamaModel;
  context: LlamaContext;
  /** How node-llama-cpp renders this model's conversations (from its chat template). */
  chatWrapper: ChatWrapper;
  /** Whether that template has a syntax of its own for function calls. */
  callsFunctions: boolean;
}

export interface LocalModelHandle {
  readonly definition: LocalModelDefinition;
  /** Loads the model on first use (a 503 with the reason when it cannot be loaded). */
  load(): Promise<LoadedLocalModel>;
  loadEmbeddings(): Promise<LlamaEmbeddingContext>;
  readonly queue: FairQueue;
  readonly embeddingQueue: FairQueue;
  /** Counts tokens generated, stopped generations included (for stats). */
  recordGenerated(tokens: number): void;
  /** A grammar that constrains sampling to JSON matching the schema (cached per schema). */
  grammarFor(schema: GbnfJsonSchema): Promise<LlamaGrammar>;
  /** A grammar for any JSON value (response_format json_object). */
  jsonGrammar(): Promise<LlamaGrammar>;
}

function finishReasonOf(stopReason: string): FinishReason {
  switch (stopReason) {
    case 'maxTokens':
      return 'length';
    case 'functionCalls':
      return 'tool_calls';
    default:
      return 'stop';
  }
}

/** The checks that need the loaded model: its template and its vocabulary. */
function checkAgainstModel(plan: LocalPlan, loaded: LoadedLocalModel, name: string): void {
  if (plan.output.kind === 'functions' && !loaded.callsFunctions) {
    throw new InvalidParameterError(
      'tools',
      `The chat template of local model '${name}' cannot call functions. Use tool_choice "required" (or name a function) to force a call under a grammar, or send the request without tools.`,
    );
  }
  if (plan.sampling.logitBias === undefined) return;
  // An id past the vocabulary would index past llama.cpp's logits.
  const tokens = loaded.model.fileInfo.metadata.tokenizer?.ggml?.tokens as unknown[] | undefined;
  const vocabulary = tokens?.length ?? 0;
  for (const token of plan.sampling.logitBias.keys()) {
    if (token >= vocabulary) {
      throw new InvalidParameterError(
        'logit_bias',
        `Token ${token} is not in the vocabulary of local model '${name}' (${vocabulary} tokens); 'logit_bias' takes the model's own token ids.`,
      );
    }
  }
}

/**
 * Fires when the client leaves or the model runs past its time; remembers which one it was, so
 * the caller can answer 504 for the one and nothing for the other.
 */
function deadlineFor(signal: AbortSignal, timeoutMs: number) {
  const controller = new AbortController();
  let timedOut = false;
  const onAbort = () => controller.abort();
  signal.addEventListener('abort', onAbort, { once: true });
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, timeoutMs);
  return {
    signal: controller.signal,
    /** Stops generation (the consumer left before the end). */
    stop: () => controller.abort(),
    failure(definition: LocalModelDefinition): Error | null {
      if (signal.aborted) return new RequestAbortedError();
      if (timedOut) {
        return new UpstreamError(
          'upstream_timeout',
          `Local model '${definition.name}' did not finish within ${definition.timeoutMs} ms.`,
        );
      }
      return null;
    },
    dispose() {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
    },
  };
}

export class LocalChatModel implements ChatModel {
  constructor(private readonly handle: LocalModelHandle) {}

  async generate(request: GenerationRequest): Promise<GenerationResult> {
    let text = '';
    const toolCalls: ToolCall[] = [];
    let result: GenerationResult | undefined;
    for await (const part of this.run(request)) {
      if (part.type === 'text') text += part.text;
      else if (part.type === 'tool-call') {
        // Local calls arrive whole: one part each.
        toolCalls.push({
          id: part.id ?? newToolCallId(),
          type: 'function',
          function: { name: part.name ?? '', arguments: part.arguments },
        });
      } else if (part.type === 'finish') {
        result = {
          text,
          finishReason: part.finishReason,
          usage: part.usage,
          ...(toolCalls.length === 0 ? {} : { toolCalls }),
        };
      }
    }
    if (result === undefined) throw new Error('local generation ended without a result');
    return result;
  }

  stream(request: GenerationRequest): AsyncIterable<StreamPart> {
    return this.run(request);
  }

  async countTokens(messages: readonly ChatTurn[]): Promise<number> {
    const { model } = await this.handle.load();
    const count = (text: string) =>
      countTokensGently(text, (slice) => model.tokenize(slice).length);
    let total = 0;
    for (const message of messages) {
      total += (await count(message.content)) + perMessageFraming;
      // The template writes each call's name and arguments into the conversation.
      for (const call of message.toolCalls ?? []) {
        total +=
          (await count(`${call.function.name}(${call.function.arguments})`)) + perMessageFraming;
      }
    }
    return total;
  }

  /**
   * node-llama-cpp reports text through a callback; this turns it into parts a consumer pulls,
   * and stops generation when the consumer stops pulling (a client that left).
   */
  private async *run(request: GenerationRequest): AsyncGenerator<StreamPart> {
    const { definition } = this.handle;
    // Refusals come before the request waits for the model.
    const plan = planLocalGeneration(request);
    const loaded = await this.handle.load();
    checkAgainstModel(plan, loaded, definition.name);
    const grammar = await this.grammarOf(plan);
    const signal = signalOf(request.signal);
    const release = await this.handle.queue.acquire(request.fairnessKey, signal);
    const deadline = deadlineFor(signal, definition.timeoutMs);
    const channel = new ChunkChannel();
    let started: StartedGeneration | undefined;
    try {
      started = await this.start(request, plan, loaded, grammar, deadline.signal, channel);
      for await (const text of channel.drain()) yield { type: 'text', text };
      const { outcome, failure } = await started.generation;
      const stopped = deadline.failure(definition);
      if (stopped !== null) throw stopped;
      // A failure of our own (a forced call left unfinished) is already written for the client.
      if (failure instanceof UpstreamError) throw failure;
      if (failure !== undefined || outcome === undefined) {
        throw new UpstreamError(
          'upstream_error',
          `Local model '${definition.name}' failed while generating.`,
          { cause: failure },
        );
      }
      for (const [index, call] of outcome.toolCalls.entries()) {
        yield {
          type: 'tool-call',
          index,
          id: call.id,
          name: call.function.name,
          arguments: call.function.arguments,
        };
      }
      yield {
        type: 'finish',
        finishReason: outcome.finishReason,
        usage: { promptTokens: outcome.promptTokens, completionTokens: outcome.completionTokens },
      };
    } finally {
      // Reached early when the consumer stops: stop generating before giving the sequence back.
      if (!channel.closed) {
        deadline.stop();
        await started?.generation;
      }
      deadline.dispose();
      started?.chat.dispose();
      release();
    }
  }

  /** The grammar the output is generated under, if any; one the generator rejects is a 400. */
  private async grammarOf(plan: LocalPlan): Promise<LlamaGrammar | undefined> {
    const { output } = plan;
    if (output.kind !== 'forced-call' && output.kind !== 'json') return undefined;
    if (output.schema === undefined) return this.handle.jsonGrammar();
    try {
      return await this.handle.grammarFor(output.schema);
    } catch (error) {
      const param = output.kind === 'forced-call' ? 'tools' : 'response_format';
      const detail = error instanceof Error ? error.message.split('\n')[0] : String(error);
      throw new InvalidParameterError(
        param,
        `The JSON Schema in '${param}' could not be turned into a grammar for local model '${this.handle.definition.name}': ${detail}`,
      );
    }
  }

  /** A chat on a fresh sequence, generating into `channel` (closed when it settles). */
  private async start(
    request: GenerationRequest,
    plan: LocalPlan,
    loaded: LoadedLocalModel,
    grammar: LlamaGrammar | undefined,
    signal: AbortSignal,
    channel: ChunkChannel,
  ): Promise<StartedGeneration> {
    const { context, model, chatWrapper } = loaded;
    const sequence = context.getSequence();
    const before = sequence.tokenMeter.getState();
    // The engine imported node-llama-cpp to load the model; this takes the same module.
    const { LlamaChat: Chat, TokenBias } = await import('node-llama-cpp');
    const chat = new Chat({ contextSequence: sequence, chatWrapper, autoDisposeSequence: true });
    try {
      const { output } = plan;
      const options = generationOptions(
        { request, plan, model, grammar, signal, channel },
        TokenBias,
      );
      const response: Promise<ChatResponse> =
        output.kind === 'functions'
          ? chat.generateResponse(plan.history, {
              ...options,
              grammar: undefined,
              functions: output.functions,
              ...(output.maxParallelCalls === undefined
                ? {}
                : { maxParallelFunctionCalls: output.maxParallelCalls }),
            })
          : chat.generateResponse(plan.history, options);
      const generation = response
        .then((result): GenerationEnd => {
          const after = sequence.tokenMeter.getState();
          const completionTokens = after.usedOutputTokens - before.usedOutputTokens;
          this.handle.recordGenerated(completionTokens);
          const usage = {
            promptTokens: after.usedInputTokens - before.usedInputTokens,
            completionTokens,
          };
          const finishReason = finishReasonOf(result.metadata.stopReason);
          if (output.kind === 'forced-call') {
            return this.forcedOutcome(result.response, output.names, finishReason, usage, request);
          }
          const calls = result.functionCalls ?? [];
          return {
            outcome: {
              finishReason: calls.length > 0 ? 'tool_calls' : finishReason,
              toolCalls: calls.map((call) => ({
                id: newToolCallId(),
                type: 'function' as const,
                function: {
                  name: call.functionName,
                  arguments: JSON.stringify(call.params ?? {}),
                },
              })),
              ...usage,
            },
          };
        })
        .catch((error: unknown): GenerationEnd => ({ failure: error }))
        .finally(() => channel.close());
      return { chat, generation };
    } catch (error) {
      chat.dispose();
      throw error;
    }
  }

  /** The one call a forced generation wrote; running out of tokens first leaves no call. */
  private forcedOutcome(
    text: string,
    names: ReadonlySet<string>,
    finishReason: FinishReason,
    usage: { promptTokens: number; completionTokens: number },
    request: GenerationRequest,
  ): GenerationEnd {
    const call = forcedCallOf(text, names);
    if (call === null) {
      return {
        failure: new UpstreamError(
          'upstream_error',
          finishReason === 'length'
            ? `Local model '${this.handle.definition.name}' reached max_tokens (${request.maxTokens}) before it finished writing the function call; raise max_tokens.`
            : `Local model '${this.handle.definition.name}' did not write a complete function call.`,
          { fallbackWorthy: false, cause: new Error(`forced call output: ${text.slice(0, 200)}`) },
        ),
      };
    }
    return { outcome: { finishReason: 'tool_calls', toolCalls: [call], ...usage } };
  }
}

export class LocalEmbeddingModel implements EmbeddingModel {
  constructor(private readonly handle: LocalModelHandle) {}

  async embed(texts: readonly string[], signal: AbortSignal): Promise<EmbeddingResult> {
    const release = await this.handle.embeddingQueue.acquire('embeddings', signal);
    try {
      const context = await this.handle.loadEmbeddings();
      const { model } = await this.handle.load();
      const embeddings: number[][] = [];
      let tokens = 0;
      for (const text of texts) {
        if (signal.aborted) throw new RequestAbortedError();
        embeddings.push([...(await context.getEmbeddingFor(text)).vector]);
        tokens += model.tokenize(text).length;
      }
      return { embeddings, tokens };
    } finally {
      release();
    }
  }
}
