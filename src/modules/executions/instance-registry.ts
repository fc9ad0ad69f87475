// Which service instances are alive, so that executions an instance left `running` when it stopped
// (crash, kill, deploy) do not stay running forever. Each instance writes a heartbeat row; a run
// whose instance has not beaten for a while is orphaned. An orphaned run tied to its request (an
// agent run, a synchronous pipeline run: its client is gone too) is closed as failed with
// `interrupted`; an orphaned queued run is claimed by this instance and queued again, to be
// continued from its records (with the Redis queue, BullMQ usually gets there first, and queuing
// the same execution again changes nothing).
import type { Logger } from 'pino';
import type { ExecutionsRepository } from './executions.repository.js';
import type { ExecutionService } from './execution-service.js';

export interface InstanceRegistryOptions {
  /** This instance's id (`inst_…`), the one its executions are recorded with. */
  id: string;
  repository: ExecutionsRepository;
  executions: ExecutionService;
  /** Queues a claimed orphan again (the job queue's enqueue). */
  requeue(run: { executionId: string; accountId: string }): Promise<void>;
  /** Other upkeep done with recovery (ending runs whose approvals are past their deadline). */
  sweep?: () => Promise<unknown>;
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

  /**
   * Fails every orphaned run tied to its request and queues every orphaned queued run again
   * (followers are told of both); answers how many runs it recovered.
   */
  async recover(): Promise<number> {
    const aliveSince = this.iso(this.staleAfterMs);
    const failed = await this.options.executions.failOrphaned(aliveSince);
    if (failed.length > 0) {
      this.options.logger.warn(
        { executions: failed },
        'marked executions of stopped instances as interrupted',
      );
    }
    await this.options.sweep?.();
    const claimed = await this.options.executions.claimOrphanedRuns(aliveSince);
    for (const run of claimed) {
      await this.options.requeue({ executionId: run.id, accountId: run.accountId });
    }
    if (claimed.length > 0) {
      this.options.logger.warn(
        { executions: claimed.map((run) => run.id) },
        'queued again the runs of stopped instances, to continue them here',
      );
    }
    return failed.length + claimed.length;
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    // Also old rows of instances that never said goodbye.
    await this.options.repository.unregisterInstance(this.id, this.iso(24 * 60 * 60 * 1000));
  }
}
