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
      else result = { text, finishReason: part.finishReason, usage: part.usage };
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
    const pending: string[] = [];
    let wake: (() => void) | undefined;
    let settled = false;
    let outcome:
      { finishReason: FinishReason; promptTokens: number; completionTokens: number } | undefined;
    let failure: unknown;
    let session: LlamaChatSession | undefined;
    let generation: Promise<void> | undefined;
    try {
      const { context } = await this.handle.load();
      const sequence = context.getSequence();
      const before = sequence.tokenMeter.getState();
      // The engine imported node-llama-cpp to load the model; this takes the same module.
      const { LlamaChatSession: ChatSession } = await import('node-llama-cpp');
      session = new ChatSession({ contextSequence: sequence, autoDisposeSequence: true });
      const { history, prompt } = historyOf(request.messages);
      session.setChatHistory([...history]);
      const grammar =
        request.responseSchema === undefined
          ? undefined
          : await this.handle.grammarFor(request.responseSchema as GbnfJsonSchema);
      generation = session
        .promptWithMeta(prompt, {
          maxTokens: request.maxTokens,
          ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
          ...(grammar === undefined ? {} : { grammar }),
          signal: deadline.signal,
          stopOnAbortSignal: true,
          onTextChunk: (chunk) => {
            pending.push(chunk);
            wake?.();
          },
        })
        .then(
          (result) => {
            const after = sequence.tokenMeter.getState();
            this.handle.recordGenerated(after.usedOutputTokens - before.usedOutputTokens);
            outcome = {
              finishReason: finishReasonOf(result.stopReason),
              promptTokens: after.usedInputTokens - before.usedInputTokens,
              completionTokens: after.usedOutputTokens - before.usedOutputTokens,
            };
          },
          (error: unknown) => {
            failure = error;
          },
        )
        .finally(() => {
          settled = true;
          wake?.();
        });

      while (true) {
        if (pending.length > 0) {
          yield { type: 'text', text: pending.splice(0).join('') };
          continue;
        }
        if (settled) break;
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
      }
      await generation;
      const stopped = deadline.failure(definition);
      if (stopped !== null) throw stopped;
      if (failure !== undefined || outcome === undefined) {
        throw new UpstreamError(
          'upstream_error',
          `Local model '${definition.name}' failed while generating.`,
          {
            cause: failure,
          },
        );
      }
      yield {
        type: 'finish',
        finishReason: outcome.finishReason,
        usage: { promptTokens: outcome.promptTokens, completionTokens: outcome.completionTokens },
      };
    } finally {
      // Reached early when the consumer stops: stop generating before giving the sequence back.
      if (!settled) {
        deadline.stop();
        await generation;
      }
      deadline.dispose();
      session?.dispose();
      release();
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
