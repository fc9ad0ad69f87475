// Chat and embeddings on a GGUF model loaded in this process by node-llama-cpp. Each request
// takes one context sequence through the fair queue, renders the conversation with the model's
// own chat template, and meters tokens with the model's own tokenizer.
import type {
  LlamaChatSession,
  ChatHistoryItem,
  GbnfJsonSchema,
  LlamaGrammar,
  LlamaContext,
  LlamaEmbeddingContext,
  LlamaModel,
} from 'node-llama-cpp';
import type { LocalModelDefinition } from '../../config/config.js';
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
} from '../spec.js';
import type { FairQueue } from './fair-queue.js';
import { countTokensGently } from '../token-budget.js';

/** Tokens a message's ChatML framing adds around its text (`<|im_start|>role\n … <|im_end|>\n`). */
const perMessageFraming = 5;

export interface LoadedLocalModel {
  model: LlamaModel;
  context: LlamaContext;
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
}

function historyOf(messages: readonly ChatTurn[]): { history: ChatHistoryItem[]; prompt: string } {
  const last = messages[messages.length - 1];
  if (last === undefined || last.role !== 'user') {
    throw new Error('a local generation needs a final user message');
  }
  const history: ChatHistoryItem[] = messages.slice(0, -1).map((message) => {
    switch (message.role) {
      case 'system':
        return { type: 'system', text: message.content };
      case 'user':
        return { type: 'user', text: message.content };
      case 'assistant':
      case 'tool':
        // Tool turns are refused before a local model is asked (capability checks); a tool
        // result that reaches here reads as the model's own context.
        return { type: 'model', response: [message.content] };
    }
  });
  return { history, prompt: last.content };
}

function finishReasonOf(stopReason: string): FinishReason {
  return stopReason === 'maxTokens' ? 'length' : 'stop';
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
    let result: GenerationResult | undefined;
    for await (const part of this.run(request)) {
      if (part.type === 'text') text += part.text;
      else if (part.type === 'finish') {
        result = { text, finishReason: part.finishReason, usage: part.usage };
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
    let total = 0;
    for (const message of messages) {
      total +=
        (await countTokensGently(message.content, (slice) => model.tokenize(slice).length)) +
        perMessageFraming;
    }
    return total;
  }

  /**
   * node-llama-cpp reports text through a callback; this turns it into parts a consumer pulls,
   * and stops generation when the consumer stops pulling (a client that left).
   */
  private async *run(request: GenerationRequest): AsyncGenerator<StreamPart> {
    const { definition } = this.handle;
    const release = await this.handle.queue.acquire(request.fairnessKey, request.signal);
    const deadline = deadlineFor(request.signal, definition.timeoutMs);
    const channel = new ChunkChannel();
    let started: StartedGeneration | undefined;
    try {
      started = await this.start(request, deadline.signal, channel);
      for await (const text of channel.drain()) yield { type: 'text', text };
      const { outcome, failure } = await started.generation;
      const stopped = deadline.failure(definition);
      if (stopped !== null) throw stopped;
      if (failure !== undefined || outcome === undefined) {
        throw new UpstreamError(
          'upstream_error',
          `Local model '${definition.name}' failed while generating.`,
          { cause: failure },
        );
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
      started?.session.dispose();
      release();
    }
  }

  /** A chat session on a fresh sequence, generating into `channel` (closed when it settles). */
  private async start(
    request: GenerationRequest,
    signal: AbortSignal,
    channel: ChunkChannel,
  ): Promise<StartedGeneration> {
    const { context } = await this.handle.load();
    const sequence = context.getSequence();
    const before = sequence.tokenMeter.getState();
    // The engine imported node-llama-cpp to load the model; this takes the same module.
    const { LlamaChatSession: ChatSession } = await import('node-llama-cpp');
    const session = new ChatSession({ contextSequence: sequence, autoDisposeSequence: true });
    try {
      const { history, prompt } = historyOf(request.messages);
      session.setChatHistory([...history]);
      const grammar =
        request.responseSchema === undefined
          ? undefined
          : await this.handle.grammarFor(request.responseSchema as GbnfJsonSchema);
      const generation = session
        .promptWithMeta(prompt, {
          maxTokens: request.maxTokens,
          ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
          ...(grammar === undefined ? {} : { grammar }),
          signal,
          stopOnAbortSignal: true,
          onTextChunk: (chunk) => channel.push(chunk),
        })
        .then(
          (result): GenerationEnd => {
            const after = sequence.tokenMeter.getState();
            this.handle.recordGenerated(after.usedOutputTokens - before.usedOutputTokens);
            return {
              outcome: {
                finishReason: finishReasonOf(result.stopReason),
                promptTokens: after.usedInputTokens - before.usedInputTokens,
                completionTokens: after.usedOutputTokens - before.usedOutputTokens,
              },
            };
          },
          (error: unknown): GenerationEnd => ({ failure: error }),
        )
        .finally(() => channel.close());
      return { session, generation };
    } catch (error) {
      session.dispose();
      throw error;
    }
  }
}

interface GenerationEnd {
  outcome?: { finishReason: FinishReason; promptTokens: number; completionTokens: number };
  failure?: unknown;
}

interface StartedGeneration {
  session: LlamaChatSession;
  /** Settles (never rejects) when generation ends, with its outcome or its failure. */
  generation: Promise<GenerationEnd>;
}

/** Text pushed by a callback, pulled by one consumer: each pull takes all that arrived since. */
class ChunkChannel {
  private readonly pending: string[] = [];
  private wake: (() => void) | undefined;
  private ended = false;

  get closed(): boolean {
    return this.ended;
  }

  push(chunk: string): void {
    this.pending.push(chunk);
    this.wake?.();
  }

  close(): void {
    this.ended = true;
    this.wake?.();
  }

  async *drain(): AsyncGenerator<string> {
    while (true) {
      if (this.pending.length > 0) {
        yield this.pending.splice(0).join('');
        continue;
      }
      if (this.ended) return;
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = undefined;
    }
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
