// Which service instances are alive, so that executions an instance left `running` when it stopped
// (crash, kill, deploy) are closed as failed with `interrupted` instead of staying running forever.
// Each instance writes a heartbeat row; a run whose instance has not beaten for a while is orphaned.
import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import { newId } from '../ids.js';
import type { DatabaseSchema } from '../storage/schema.js';

export interface InstanceRegistryOptions {
  db: Kysely<DatabaseSchema>;
  logger: FastifyBaseLogger;
  heartbeatMs?: number;
  /** An instance silent for longer is considered stopped. */
  staleAfterMs?: number;
  now?: () => number;
}

export const interruptedError = {
  message: 'interrupted: the service instance running this execution stopped before it finished',
  type: 'api_error',
  code: 'interrupted',
};

export class InstanceRegistry {
  readonly id = newId('inst');
  private timer: NodeJS.Timeout | undefined;
  private readonly heartbeatMs: number;
  private readonly staleAfterMs: number;
  private readonly now: () => number;

  constructor(private readonly options: InstanceRegistryOptions) {
    this.heartbeatMs = options.heartbeatMs ?? 5_000;
    this.staleAfterMs = options.staleAfterMs ?? 30_000;
    this.now = options.now ?? Date.now;
  }

  private iso(offsetMs = 0): string {
    return new Date(this.now() - offsetMs).toISOString();
  }

  /** Registers this instance and closes runs orphaned by stopped ones; then keeps both going. */
  async start(): Promise<void> {
    await this.options.db
      .insertInto('instances')
      .values({ id: this.id, started_at: this.iso(), heartbeat_at: this.iso() })
      .execute();
    await this.recover();
    let beats = 0;
    this.timer = setInterval(() => {
      beats += 1;
      void this.beat()
        .then(() => (beats % 6 === 0 ? this.recover() : 0))
        .catch((error: unknown) =>
          this.options.logger.warn({ err: error }, 'instance heartbeat failed'),
        );
    }, this.heartbeatMs);
    this.timer.unref();
  }

  private async beat(): Promise<void> {
    await this.options.db
      .updateTable('instances')
      .set({ heartbeat_at: this.iso() })
      .where('id', '=', this.id)
      .execute();
  }

  /** Fails every running execution whose instance is not alive; returns how many. */
  async recover(): Promise<number> {
    const db = this.options.db;
    const alive = db
      .selectFrom('instances')
      .select('id')
      .where('heartbeat_at', '>', this.iso(this.staleAfterMs));
    const orphaned = await db
      .selectFrom('executions')
      .select(['id', 'created_at'])
      .where('status', '=', 'running')
      .where((eb) => eb.or([eb('instance_id', 'is', null), eb('instance_id', 'not in', alive)]))
      .execute();
    if (orphaned.length === 0) return 0;
    const completedAt = this.iso();
    const ids = orphaned.map((row) => row.id);
    await db.transaction().execute(async (transaction) => {
      await transaction
        .updateTable('executions')
        .set({
          status: 'failed',
          error: JSON.stringify(interruptedError),
          completed_at: completedAt,
        })
        .where('id', 'in', ids)
        .where('status', '=', 'running')
        .execute();
      await transaction
        .updateTable('execution_stages')
        .set({
          status: 'failed',
          error: JSON.stringify(interruptedError),
          completed_at: completedAt,
        })
        .where('execution_id', 'in', ids)
        .where('status', '=', 'running')
        .execute();
      await transaction
        .updateTable('execution_stages')
        .set({ status: 'skipped' })
        .where('execution_id', 'in', ids)
        .where('status', '=', 'pending')
        .execute();
    });
    this.options.logger.warn(
      { executions: ids },
      'marked executions of stopped instances as interrupted',
    );
    return ids.length;
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.options.db.deleteFrom('instances').where('id', '=', this.id).execute();
    // Old rows of instances that never said goodbye.
    await this.options.db
      .deleteFrom('instances')
      .where('heartbeat_at', '<', this.iso(24 * 60 * 60 * 1000))
      .execute();
  }
}
