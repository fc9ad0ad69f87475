// The registry's chat and embedding models, metered: before each upstream call the meter is
// started (a budget may refuse the call there, before anything is sent), and after it the ticket
// is ended with what the call used — the provider's usage, or for a stream cut short what was
// counted of it (the input, and the output streamed so far), so that a reservation is always
// settled, whatever happened.
import type { ModelDefinition } from '../config/config.js';
import {
  meteredUsageOf,
  noUsage,
  type CallEnd,
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

/**
 * The end naming its deployment: every field written out (`Required` keeps the list whole), as one
 * literal of one shape, not the end spread and a field added (each added field went through V8's
 * runtime on every call; bench/results/gateway-profile.md).
 */
function endOfDeployment(end: CallEnd, deployment: string): Required<CallEnd> {
  return {
    status: end.status,
    errorCode: end.errorCode ?? null,
    usage: end.usage,
    latencyMs: end.latencyMs,
    deployment,
    cacheHit: end.cacheHit === true,
  };
}

/** The meter with every ticket's record naming the deployment that answered. */
function ofDeployment(meter: UsageMeter, deployment: string): UsageMeter {
  return {
    start: async (start) => {
      const ticket = await meter.start(start);
      return { end: (end) => ticket.end(endOfDeployment(end, deployment)) };
    },
  };
}

export function meteredChatModel(
  model: ChatModel,
  definition: ModelDefinition,
  modelMeter: UsageMeter,
  /** The deployment of the model this is (its name in the ledger). */
  deployment?: string,
): ChatModel {
  const meter = deployment === undefined ? modelMeter : ofDeployment(modelMeter, deployment);
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

/**
 * A metered stream's iterator: its ticket ends with the provider's usage, or with what was counted
 * of it. Not async methods: a part passes through with the inner stream's own promise and one
 * callback, not a second promise and an await per part.
 */
class MeteredStreamIterator implements AsyncIterator<StreamPart> {
  private ticket: MeterTicket | null = null;
  private inner: AsyncIterator<StreamPart> | null = null;
  private started = 0;
  /** The output so far, counted if the stream is cut short. */
  private written = '';
  /** Relayed events so far (a cut relayed stream's output is counted one token per event). */
  private relayedChunks = 0;
  private ended = false;
  private readonly input: InputCount;

  constructor(
    private readonly model: ChatModel,
    private readonly request: GenerationRequest,
    private readonly start: (input: InputCount) => Promise<MeterTicket>,
  ) {
    this.input = new InputCount(model, request.messages);
  }

  next(): Promise<IteratorResult<StreamPart>> {
    if (this.inner !== null) return this.step(this.inner);
    return this.start(this.input).then((ticket) => {
      this.ticket = ticket;
      this.started = performance.now();
      let stream: AsyncIterator<StreamPart>;
      try {
        stream = this.model.stream(this.request)[Symbol.asyncIterator]();
      } catch (error) {
        return this.failed(error);
      }
      this.inner = stream;
      return this.step(stream);
    });
  }

  async return(value?: unknown): Promise<IteratorResult<StreamPart>> {
    // The consumer stopped before the finish part: the client went away.
    this.end({ status: 'aborted', errorCode: null });
    return (await this.inner?.return?.(value)) ?? { done: true, value: undefined };
  }

  private step(stream: AsyncIterator<StreamPart>): Promise<IteratorResult<StreamPart>> {
    let pending: Promise<IteratorResult<StreamPart>>;
    try {
      pending = stream.next();
    } catch (error) {
      // An iterator that throws rather than rejects: the same end, as a rejection.
      return Promise.resolve().then(() => this.failed(error));
    }
    return pending.then(this.passed, this.failed);
  }

  /** Each part as it passes: its text kept for a cut stream, the finish part's usage settled. */
  private readonly passed = (step: IteratorResult<StreamPart>): IteratorResult<StreamPart> => {
    // A stream that ends without its finish part: settled with what was counted of it.
    if (step.done === true) this.end({ status: 'ok', errorCode: null });
    else {
      const part = step.value;
      if (part.type === 'text') this.written += part.text;
      else if (part.type === 'tool-call') this.written += part.arguments;
      else if (part.type === 'relayed') this.relayedChunks += part.chunks;
      else if (part.type === 'finish' && !this.ended && this.ticket !== null) {
        this.ended = true;
        this.ticket.end({
          status: 'ok',
          usage: meteredUsageOf(part.usage),
          latencyMs: performance.now() - this.started,
        });
      }
    }
    return step;
  };

  private readonly failed = (error: unknown): never => {
    this.end(statusOf(error));
    throw error;
  };

  /** The usage of a stream cut short: its input, and the output streamed so far. */
  private async counted(): Promise<MeteredUsage> {
    const [inputTokens, outputTokens] = await Promise.all([
      this.input.get(),
      this.written === ''
        ? 0
        : this.model.countTokens([{ role: 'assistant', content: this.written }]),
    ]);
    return { ...noUsage, inputTokens, outputTokens: outputTokens + this.relayedChunks };
  }

  private end(outcome: { status: 'ok' | 'error' | 'aborted'; errorCode: string | null }): void {
    if (this.ended || this.ticket === null) return;
    this.ended = true;
    const ticket = this.ticket;
    const latencyMs = performance.now() - this.started;
    void this.counted().then(
      (usage) => ticket.end({ ...outcome, usage, latencyMs }),
      () => ticket.end({ ...outcome, usage: noUsage, latencyMs }),
    );
  }
}

/** A stream whose ticket ends with the provider's usage, or with what was counted of it. */
function meteredStream(
  model: ChatModel,
  request: GenerationRequest,
  start: (input: InputCount) => Promise<MeterTicket>,
): AsyncIterable<StreamPart> {
  return { [Symbol.asyncIterator]: () => new MeteredStreamIterator(model, request, start) };
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
