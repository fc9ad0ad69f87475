// One generation of a local chat model (local-chat-model.ts): node-llama-cpp's options from the
// request and its plan, the channel that carries text from node-llama-cpp's callback to the stream,
// and what the generation's end reports.
import type {
  LLamaChatGenerateResponseOptions,
  LlamaChat,
  LlamaGrammar,
  LlamaModel,
  TokenBias as TokenBiasClass,
} from 'node-llama-cpp';
import type { FinishReason, GenerationRequest, ToolCall } from '../spec.js';
import type { LocalPlan } from './local-request.js';

/** What node-llama-cpp is asked for one generation: the request's sampling and the plan's output. */
export interface GenerationInputs {
  readonly request: GenerationRequest;
  readonly plan: LocalPlan;
  readonly model: LlamaModel;
  readonly grammar: LlamaGrammar | undefined;
  readonly signal: AbortSignal;
  /** Where text chunks go as they are generated (none for a forced call). */
  readonly channel: ChunkChannel;
}

/** node-llama-cpp's options for a generation (`TokenBias` from the module the engine loaded). */
export function generationOptions(
  inputs: GenerationInputs,
  TokenBias: typeof TokenBiasClass,
): LLamaChatGenerateResponseOptions<undefined> {
  const { request, plan, model, grammar, signal, channel } = inputs;
  const { output, sampling } = plan;
  let tokenBias: InstanceType<typeof TokenBias> | undefined;
  if (sampling.logitBias !== undefined) {
    tokenBias = TokenBias.for(model);
    for (const [token, bias] of sampling.logitBias) {
      // Added to the token's logit, as OpenAI does; -100 all but bans it.
      tokenBias.set(token as Parameters<typeof tokenBias.set>[0], { logit: bias });
    }
  }
  return {
    maxTokens: request.maxTokens,
    ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
    ...(sampling.topP === undefined ? {} : { topP: sampling.topP }),
    ...(sampling.seed === undefined ? {} : { seed: sampling.seed }),
    // Stop sequences end content, as OpenAI's do; a forced call is not content.
    ...(sampling.stop === undefined || output.kind === 'forced-call'
      ? {}
      : { customStopTriggers: sampling.stop }),
    ...(sampling.presencePenalty === undefined && sampling.frequencyPenalty === undefined
      ? {}
      : {
          repeatPenalty: {
            ...(sampling.presencePenalty === undefined
              ? {}
              : { presencePenalty: sampling.presencePenalty }),
            ...(sampling.frequencyPenalty === undefined
              ? {}
              : { frequencyPenalty: sampling.frequencyPenalty }),
          },
        }),
    ...(tokenBias === undefined ? {} : { tokenBias }),
    signal,
    stopOnAbortSignal: true,
    // A forced call is JSON for the parser, not text for the client.
    ...(output.kind === 'forced-call'
      ? {}
      : { onTextChunk: (chunk: string) => channel.push(chunk) }),
    ...(grammar === undefined ? {} : { grammar }),
  };
}

/** What is read of node-llama-cpp's answer (its type follows function schemas known at compile time). */
export interface ChatResponse {
  readonly response: string;
  readonly metadata: { readonly stopReason: string };
  readonly functionCalls?: ReadonlyArray<{
    readonly functionName: string;
    readonly params: unknown;
  }>;
}

export interface GenerationEnd {
  outcome?: {
    finishReason: FinishReason;
    toolCalls: readonly ToolCall[];
    promptTokens: number;
    completionTokens: number;
  };
  failure?: unknown;
}

export interface StartedGeneration {
  chat: LlamaChat;
  /** Settles (never rejects) when generation ends, with its outcome or its failure. */
  generation: Promise<GenerationEnd>;
}

/** Text pushed by a callback, pulled by one consumer: each pull takes all that arrived since. */
export class ChunkChannel {
  private readonly pending: string[] = [];
  private wake: (() => void) | undefined;
  private ended = false;

  get closed(): boolean {
    return this.ended;
  }

  push(chunk: string): void {
    // node-llama-cpp reports empty chunks around function calls: nothing for the client.
    if (chunk === '') return;
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
