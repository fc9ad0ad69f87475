// The registry's chat and embedding models, metered: before each upstream call the meter is
// started (a budget may refuse the call there, before anything is sent), and after it the ticket
// is ended with what the call used — the provider's usage, or for a stream cut short what was
// counted of it (the input, and the output streamed so far), so that a reservation is always
// settled, whatever happened.
import type { ModelDefinition } from '../config/config.js';
import {
  meteredUsageOf,
  noUsage,
  type CallAttribution,
  type MeteredUsage,
  type MeterTicket,
  type UsageMeter,
} from './metering.js';
import {
  RequestAbortedError,
  UpstreamError,
  type ChatModel,
  type ChatTurn,
  type EmbeddingModel,
  type GenerationRequest,
  type StreamPart,
} from './spec.js';

/** A call's attribution; a call made without one is the account's (fairnessKey) alone. */
function attributionOf(request: GenerationRequest): CallAttribution {
  return (
    request.attribution ?? {
      accountId: request.fairnessKey,
      apiKeyId: null,
      endUser: null,
      route: 'internal',
    }
  );
}

function statusOf(error: unknown): { status: 'error' | 'aborted'; errorCode: string | null } {
  if (error instanceof RequestAbortedError) return { status: 'aborted', errorCode: null };
  return {
    status: 'error',
    errorCode:
      error instanceof UpstreamError
        ? error.code
        : ((error as { code?: string }).code ?? 'internal_error'),
  };
}

/** Counts tokens once, whoever asks first (the reservation, or a cut stream's settlement). */
class InputCount {
  private counted: Promise<number> | null = null;
  constructor(
    private readonly model: ChatModel,
    private readonly messages: readonly ChatTurn[],
  ) {}
  get(): Promise<number> {
    this.counted ??= this.model.countTokens(this.messages);
    return this.counted;
  }
}

export function meteredChatModel(
  model: ChatModel,
  definition: ModelDefinition,
  meter: UsageMeter,
): ChatModel {
  const start = async (request: GenerationRequest, input: InputCount): Promise<MeterTicket> =>
    meter.start({
      definition,
      attribution: attributionOf(request),
      worstCase: async () => ({
        ...noUsage,
        inputTokens: await input.get(),
        outputTokens: request.maxTokens,
      }),
    });
  return {
    async generate(request) {
      const input = new InputCount(model, request.messages);
      const ticket = await start(request, input);
      const started = performance.now();
      try {
        const result = await model.generate(request);
        ticket.end({
          status: 'ok',
          usage: meteredUsageOf(result.usage),
          latencyMs: performance.now() - started,
        });
        return result;
      } catch (error) {
        // No answer: a failed call is charged nothing (the provider bills no failed request).
        ticket.end({ ...statusOf(error), usage: noUsage, latencyMs: performance.now() - started });
        throw error;
      }
    },
    stream(request) {
      return meteredStream(model, request, (input) => start(request, input));
    },
    countTokens: (messages) => model.countTokens(messages),
  };
}

/** A stream whose ticket ends with the provider's usage, or with what was counted of it. */
function meteredStream(
  model: ChatModel,
  request: GenerationRequest,
  start: (input: InputCount) => Promise<MeterTicket>,
): AsyncIterable<StreamPart> {
  return {
    [Symbol.asyncIterator]() {
      const input = new InputCount(model, request.messages);
      let ticket: MeterTicket | null = null;
      let inner: AsyncIterator<StreamPart> | null = null;
      let started = 0;
      let written = '';
      let ended = false;
      /** The usage of a stream cut short: its input, and the output streamed so far. */
      const counted = async (): Promise<MeteredUsage> => {
        const [inputTokens, outputTokens] = await Promise.all([
          input.get(),
          written === '' ? 0 : model.countTokens([{ role: 'assistant', content: written }]),
        ]);
        return { ...noUsage, inputTokens, outputTokens };
      };
      const end = (outcome: { status: 'ok' | 'error' | 'aborted'; errorCode: string | null }) => {
        if (ended || ticket === null) return;
        ended = true;
        const endTicket = ticket;
        const latencyMs = performance.now() - started;
        void counted().then(
          (usage) => endTicket.end({ ...outcome, usage, latencyMs }),
          () => endTicket.end({ ...outcome, usage: noUsage, latencyMs }),
        );
      };
      return {
        async next() {
          if (inner === null) {
            ticket = await start(input);
            started = performance.now();
            inner = model.stream(request)[Symbol.asyncIterator]();
          }
          try {
            const step = await inner.next();
            // A stream that ends without its finish part: settled with what was counted of it.
            if (step.done === true) end({ status: 'ok', errorCode: null });
            else {
              const part = step.value;
              if (part.type === 'text') written += part.text;
              else if (part.type === 'tool-call') written += part.arguments;
              else if (part.type === 'finish' && !ended && ticket !== null) {
                ended = true;
                ticket.end({
                  status: 'ok',
                  usage: meteredUsageOf(part.usage),
                  latencyMs: performance.now() - started,
                });
              }
            }
            return step;
          } catch (error) {
            end(statusOf(error));
            throw error;
          }
        },
        async return(value?: unknown) {
          // The consumer stopped before the finish part: the client went away.
          end({ status: 'aborted', errorCode: null });
          return (await inner?.return?.(value)) ?? { done: true, value: undefined };
        },
      };
    },
  };
}

export function meteredEmbeddingModel(
  model: EmbeddingModel,
  definition: ModelDefinition,
  meter: UsageMeter,
): EmbeddingModel {
  return {
    async embed(texts, signal, attribution) {
      const ticket = await meter.start({
        definition,
        attribution: attribution ?? {
          accountId: '',
          apiKeyId: null,
          endUser: null,
          route: 'internal',
        },
        // No tokenizer here: a token is at least one character, so the text's length bounds it.
        worstCase: () =>
          Promise.resolve({
            ...noUsage,
            inputTokens: texts.reduce((sum, text) => sum + text.length, 0),
          }),
      });
      const started = performance.now();
      try {
        const result = await model.embed(texts, signal, attribution);
        ticket.end({
          status: 'ok',
          usage: { ...noUsage, inputTokens: result.tokens },
          latencyMs: performance.now() - started,
        });
        return result;
      } catch (error) {
        ticket.end({ ...statusOf(error), usage: noUsage, latencyMs: performance.now() - started });
        throw error;
      }
    },
  };
}
