// A model served by several deployments (the same model at several upstreams), as one chat model:
// each call goes to one healthy deployment, chosen by weight and by what this instance observes of
// each (power of two choices: of two deployments drawn by weight, the one whose recent latency
// times the calls it has under way is lower), within each deployment's rpm / tpm. A deployment that
// fails cools down for every instance (./deployment-health.ts) and the call moves to the next,
// within the request's `max_attempts`. A stream is held until its first content (text, a tool call,
// a refusal, or the finish of an empty answer): a failure before it moves to the next deployment
// and the client sees one clean stream; after it, the failure ends the stream as before.
import type { Logger } from 'pino';
import type { DeploymentDefinition } from '../../config/config.js';
import {
  RequestAbortedError,
  UpstreamError,
  type ChatModel,
  type ChatTurn,
  type GenerationRequest,
  type GenerationResult,
  type StreamPart,
} from '../spec.js';
import {
  availabilityOf,
  healthy,
  type DeploymentHealth,
  type DeploymentState,
} from './deployment-health.js';

/** A deployment with its (metered) model. */
export interface RoutedDeployment {
  readonly deployment: DeploymentDefinition;
  readonly model: ChatModel;
}

/** What this instance observes of one deployment. */
class DeploymentStats {
  /** Moving average of the time to an answer (or a stream's first content), ms. */
  latencyMs: number | null = null;
  inFlight = 0;
  private minute = 0;
  private requests = 0;
  private tokens = 0;

  constructor(readonly deployment: DeploymentDefinition) {}

  private roll(now: number): void {
    const minute = Math.floor(now / 60_000);
    if (minute !== this.minute) {
      this.minute = minute;
      this.requests = 0;
      this.tokens = 0;
    }
  }

  /** Whether its rpm / tpm leave room for another call this minute. */
  hasRoom(now: number): boolean {
    this.roll(now);
    const { rpm, tpm } = this.deployment;
    return (rpm === null || this.requests < rpm) && (tpm === null || this.tokens < tpm);
  }

  started(now: number): void {
    this.roll(now);
    this.requests += 1;
    this.inFlight += 1;
  }

  answered(latencyMs: number): void {
    this.latencyMs = this.latencyMs === null ? latencyMs : this.latencyMs * 0.8 + latencyMs * 0.2;
  }

  ended(tokens: number, now: number): void {
    this.inFlight = Math.max(0, this.inFlight - 1);
    this.roll(now);
    this.tokens += tokens;
  }

  /** Lower is better: expected wait, given what is under way. */
  score(): number {
    return (this.latencyMs ?? 0) * (this.inFlight + 1) + this.inFlight;
  }
}

/** Whether a failure is the deployment's (it cools down), not the request's. */
export function coolsDown(error: UpstreamError): boolean {
  const status = error.upstreamStatus;
  if (status === null || status < 400 || status >= 500) return true;
  return status === 402 || status === 408 || status === 429;
}

interface Choice {
  readonly index: number;
  readonly id: string;
}

/** Whether a streamed part is content: what, once sent, cannot be taken back. */
function isContent(part: StreamPart): boolean {
  if (part.type === 'relayed') return part.content;
  return part.type !== 'text' || part.text.length > 0;
}

export class DeploymentRouter implements ChatModel {
  private readonly ids: readonly string[];
  private readonly stats: readonly DeploymentStats[];
  private lastStoreWarning = 0;

  constructor(
    private readonly modelName: string,
    private readonly deployments: readonly RoutedDeployment[],
    private readonly health: DeploymentHealth,
    private readonly logger: Logger,
    /** How long a probe keeps the others away: the model's time limit. */
    private readonly probeHoldMs: number,
    private readonly random: () => number = Math.random,
    private readonly now: () => number = Date.now,
  ) {
    this.ids = deployments.map(({ deployment }) => `${modelName}/${deployment.name}`);
    this.stats = deployments.map(({ deployment }) => new DeploymentStats(deployment));
  }

  /** Each deployment's state, as this instance knows it (for the model listing). */
  async deploymentStates(): Promise<Array<{ name: string; state: DeploymentState }>> {
    const states = await this.statesNow();
    return this.deployments.map(({ deployment }, index) => ({
      name: deployment.name,
      state: states[index] ?? healthy,
    }));
  }

  private async statesNow(): Promise<DeploymentState[]> {
    try {
      return await this.health.states(this.ids);
    } catch (error) {
      // The shared store cannot be read: every deployment is tried as if healthy (failing over
      // still works within the request), rather than the model failing for want of its health.
      this.warnOnce(error, 'deployment health could not be read; trying every deployment');
      return this.ids.map(() => healthy);
    }
  }

  private warnOnce(error: unknown, message: string): void {
    const now = this.now();
    if (now - this.lastStoreWarning < 10_000) return;
    this.lastStoreWarning = now;
    this.logger.warn({ err: error, model: this.modelName }, message);
  }

  /** The deployment for the next call, or null when none may be called now. */
  private async choose(tried: ReadonlySet<number>): Promise<Choice | null> {
    const states = await this.statesNow();
    const now = this.now();
    const usable: number[] = [];
    const probes: number[] = [];
    states.forEach((state, index) => {
      if (tried.has(index) || !this.stats[index]!.hasRoom(now)) return;
      const availability = availabilityOf(state, now);
      if (availability === 'use') usable.push(index);
      else if (availability === 'probe') probes.push(index);
    });
    for (const index of probes) {
      const claimed = await this.health
        .claimProbe(this.ids[index]!, this.probeHoldMs)
        .catch((error: unknown) => {
          this.warnOnce(error, 'deployment health: could not claim a probe');
          return false;
        });
      if (claimed) {
        this.logger.info(
          { model: this.modelName, deployment: this.deployments[index]!.deployment.name },
          'probing a deployment after its cooldown',
        );
        return { index, id: this.ids[index]! };
      }
    }
    if (usable.length === 0) return null;
    const index = usable.length === 1 ? usable[0]! : this.twoChoices(usable);
    return { index, id: this.ids[index]! };
  }

  /** Of two deployments drawn by weight, the one with the lower score. */
  private twoChoices(usable: readonly number[]): number {
    const first = this.draw(usable);
    const second = this.draw(usable.filter((index) => index !== first));
    return this.stats[second]!.score() < this.stats[first]!.score() ? second : first;
  }

  private draw(among: readonly number[]): number {
    const total = among.reduce((sum, index) => sum + this.deployments[index]!.deployment.weight, 0);
    let ticket = this.random() * total;
    for (const index of among) {
      ticket -= this.deployments[index]!.deployment.weight;
      if (ticket < 0) return index;
    }
    return among[among.length - 1]!;
  }

  /** The error when no deployment may be called: each cooling, or at its rate limit. */
  private async noneLeft(): Promise<UpstreamError> {
    const states = await this.statesNow();
    const now = this.now();
    const waits = states
      .map((state) => state.until - now)
      .filter((wait) => wait > 0)
      .sort((a, b) => a - b);
    const seconds =
      waits.length > 0 ? Math.ceil(waits[0]! / 1000) : 60 - (Math.floor(now / 1000) % 60);
    return new UpstreamError(
      'model_unavailable',
      waits.length > 0
        ? `Every deployment of model '${this.modelName}' is cooling down after failures; retry in ${seconds} s.`
        : `Every deployment of model '${this.modelName}' is at its rate limit; retry in ${seconds} s.`,
      { retryAfterSeconds: seconds },
    );
  }

  /**
   * A failed call: the deployment cools down when the failure is its own; the caller moves on
   * when another deployment could do better. Returns the error to keep, or throws it.
   */
  private async failed(choice: Choice, error: unknown): Promise<UpstreamError> {
    this.stats[choice.index]!.ended(0, this.now());
    if (error instanceof RequestAbortedError) throw error;
    if (!(error instanceof UpstreamError) || !error.fallbackWorthy) throw error;
    if (coolsDown(error)) {
      await this.health.failed(choice.id, error.upstreamRetryAfterMs).catch((failure: unknown) => {
        this.warnOnce(failure, 'deployment health: could not record a failure');
      });
    }
    this.logger.warn(
      {
        model: this.modelName,
        deployment: this.deployments[choice.index]!.deployment.name,
        code: error.code,
        err: error.cause ?? error,
      },
      'deployment failed; trying another',
    );
    return error;
  }

  /**
   * Calls one deployment after another (each at most once, within the request's attempts) until
   * `call` succeeds on one; each failure is recorded (the deployment's cooldown, its stats) and
   * the first is thrown when none is left.
   */
  private async failover<T>(
    request: GenerationRequest,
    call: (choice: Choice, stats: DeploymentStats, started: number) => Promise<T>,
  ): Promise<T> {
    const tried = new Set<number>();
    let first: UpstreamError | null = null;
    while (request.attempts === undefined || request.attempts.left > 0) {
      const choice = await this.choose(tried);
      if (choice === null) break;
      tried.add(choice.index);
      const stats = this.stats[choice.index]!;
      const started = this.now();
      stats.started(started);
      try {
        const result = await call(choice, stats, started);
        stats.answered(this.now() - started);
        this.health.succeeded(choice.id);
        return result;
      } catch (error) {
        // Every failure is recorded (its deployment cools down), the first one kept to report.
        const failure = await this.failed(choice, error);
        first ??= failure;
      }
    }
    throw first ?? (await this.noneLeft());
  }

  generate(request: GenerationRequest): Promise<GenerationResult> {
    return this.failover(request, async (choice, stats) => {
      const result = await this.deployments[choice.index]!.model.generate(request);
      stats.ended(result.usage.promptTokens + result.usage.completionTokens, this.now());
      return result;
    });
  }

  stream(request: GenerationRequest): AsyncIterable<StreamPart> {
    return new FailoverStream(this, request);
  }

  countTokens(messages: readonly ChatTurn[]): Promise<number> {
    return this.deployments[0]!.model.countTokens(messages);
  }

  /**
   * Opens a stream on one deployment after another until one sends content: the parts so far
   * and the rest of that deployment's stream.
   */
  open(
    request: GenerationRequest,
  ): Promise<{ held: StreamPart[]; rest: AsyncIterator<StreamPart>; done: (ok: boolean) => void }> {
    return this.failover(request, async (choice, stats) => {
      const iterator =
        this.deployments[choice.index]!.model.stream(request)[Symbol.asyncIterator]();
      const held: StreamPart[] = [];
      try {
        for (;;) {
          const next = await iterator.next();
          if (next.done === true) {
            throw new UpstreamError(
              'upstream_error',
              `Model '${this.modelName}' ended its answer without a finish.`,
            );
          }
          held.push(next.value);
          if (isContent(next.value)) break;
        }
      } catch (error) {
        void iterator.return?.();
        throw error;
      }
      return {
        held,
        rest: iterator,
        done: (ok: boolean) => {
          stats.ended(0, this.now());
          if (!ok) void this.health.failed(choice.id, null).catch(() => undefined);
        },
      };
    });
  }
}

/**
 * A stream over deployments: opened (with failover) on the first `next`, then the chosen
 * deployment's parts passed through with its own promises.
 */
class FailoverStream implements AsyncIterableIterator<StreamPart> {
  private opened: Awaited<ReturnType<DeploymentRouter['open']>> | null = null;
  private finished = false;

  constructor(
    private readonly router: DeploymentRouter,
    private readonly request: GenerationRequest,
  ) {}

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<StreamPart>> {
    const { opened } = this;
    if (opened === null) {
      return this.router.open(this.request).then((result) => {
        this.opened = result;
        return this.next();
      });
    }
    const held = opened.held.shift();
    if (held !== undefined) {
      if (held.type === 'finish') this.end(true);
      return Promise.resolve({ value: held, done: false });
    }
    return opened.rest.next().then(
      (result) => {
        if (result.done === true || result.value.type === 'finish') this.end(true);
        return result;
      },
      (error: unknown) => {
        this.end(!(error instanceof UpstreamError) || !coolsDown(error));
        throw error;
      },
    );
  }

  return(): Promise<IteratorResult<StreamPart>> {
    this.end(true);
    void this.opened?.rest.return?.();
    return Promise.resolve({ value: undefined, done: true });
  }

  private end(ok: boolean): void {
    if (this.finished || this.opened === null) return;
    this.finished = true;
    this.opened.done(ok);
  }
}
