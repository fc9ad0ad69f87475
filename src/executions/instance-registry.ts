// Which service instances are alive, so that executions an instance left `running` when it stopped
// (crash, kill, deploy) are closed as failed with `interrupted` instead of staying running forever.
// Each instance writes a heartbeat row; a run whose instance has not beaten for a while is orphaned.
import type { Logger } from 'pino';
import type { ExecutionsRepository } from '../storage/repositories/executions.repository.js';
import type { ExecutionService } from './execution-service.js';

export interface InstanceRegistryOptions {
  /** This instance's id (`inst_…`), the one its executions are recorded with. */
  id: string;
  repository: ExecutionsRepository;
  executions: ExecutionService;
  logger: Logger;
  heartbeatMs?: number;
  /** An instance silent for longer is considered stopped. */
  staleAfterMs?: number;
  now?: () => number;
}

export class InstanceRegistry {
  readonly id: string;
  private timer: NodeJS.Timeout | undefined;
  private readonly heartbeatMs: number;
  private readonly staleAfterMs: number;
  private readonly now: () => number;

  constructor(private readonly options: InstanceRegistryOptions) {
    this.id = options.id;
    this.heartbeatMs = options.heartbeatMs ?? 5_000;
    this.staleAfterMs = options.staleAfterMs ?? 30_000;
    this.now = options.now ?? Date.now;
  }

  private iso(offsetMs = 0): string {
    return new Date(this.now() - offsetMs).toISOString();
  }

  /** Registers this instance and closes runs orphaned by stopped ones; then keeps both going. */
  async start(): Promise<void> {
    await this.options.repository.registerInstance(this.id, this.iso());
    await this.recover();
    let beats = 0;
    this.timer = setInterval(() => {
      beats += 1;
      void this.options.repository
        .beat(this.id, this.iso())
        .then(() => (beats % 6 === 0 ? this.recover() : 0))
        .catch((error: unknown) =>
          this.options.logger.warn({ err: error }, 'instance heartbeat failed'),
        );
    }, this.heartbeatMs);
    this.timer.unref();
  }

  /** Fails every running execution whose instance is not alive (followers are told); how many. */
  async recover(): Promise<number> {
    const ids = await this.options.executions.failOrphaned(this.iso(this.staleAfterMs));
    if (ids.length > 0) {
      this.options.logger.warn(
        { executions: ids },
        'marked executions of stopped instances as interrupted',
      );
    }
    return ids.length;
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    // Also old rows of instances that never said goodbye.
    await this.options.repository.unregisterInstance(this.id, this.iso(24 * 60 * 60 * 1000));
  }
}
