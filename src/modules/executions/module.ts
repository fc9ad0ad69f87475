// The executions module, wired: execution records of agent and pipeline runs with their change feed
// (through Redis or PostgreSQL to the other instances), this instance's heartbeat, the queue of
// background runs, the decisions on tool calls waiting for approval, and the HTTP plugin of
// /v1/executions for app.ts. It is below agents and pipelines, which record their runs here and
// take the queue's runs; it knows neither. What it starts it closes, last started first, also when
// a later step of its start fails.
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { CredentialWatch } from '../../auth/credential-watch.js';
import type { AppConfig } from '../../config/config.js';
import type { FeaturePlugin } from '../../http/feature-plugin.js';
import { newId } from '../../ids.js';
import { MemoryJobQueue, type JobQueue, type RunJob } from '../../jobs/job-queue.js';
import { Closers } from '../../lifecycle/closers.js';
import type { PlatformMetrics } from '../metrics/metrics.js';
import type { Storage } from '../../storage/database.js';
import { PostgresListener } from '../../storage/dialects/postgres-notifications.js';
import type { ToolArguments } from '../tools/tool-arguments.js';
import { ApprovalService } from './approvals.js';
import {
  ExecutionChangeFeed,
  postgresChangeTransport,
  redisChangeTransport,
  type ChangeTransport,
} from './change-feed.js';
import { ExecutionService, type ConversationLookup } from './execution-service.js';
import { ExecutionsRepository } from './executions.repository.js';
import { ExecutionStepsRepository } from './execution-steps.repository.js';
import { executionsPlugin } from './executions.routes.js';
import { InstanceRegistry } from './instance-registry.js';

export interface ExecutionsModuleDependencies {
  readonly config: Pick<AppConfig, 'database' | 'jobs'>;
  readonly storage: Pick<Storage, 'db'>;
  /** Carries execution changes and the job queue between instances, when REDIS_URL is set. */
  readonly redis: Redis | null;
  /** A Redis key or channel name under the configured prefix. */
  readonly redisName: (name: string) => string;
  /** The Redis channel of execution changes, instead of the prefixed default (tests isolate). */
  readonly executionChannel?: string | undefined;
  /** The job queue's BullMQ key prefix, instead of the prefixed default (tests isolate). */
  readonly jobPrefix?: string | undefined;
  /** A run's `conversation_id` must name a conversation of its account (and user). */
  readonly conversations: ConversationLookup;
  /** The checks a person's edited arguments meet, as the model's do (the tools module's). */
  readonly arguments: Pick<ToolArguments, 'approvalProblem'>;
  /** Ends a follower's event stream when its key is revoked or expires. */
  readonly credentialWatch: CredentialWatch;
  /** The job queue's depth and outcomes are reported here (`platform_jobs_*`). */
  readonly metrics: PlatformMetrics;
  readonly logger: Logger;
  readonly now: () => number;
}

export interface ExecutionsModule {
  /** Execution records of agent and pipeline runs, and their change feed. */
  readonly service: ExecutionService;
  /** This instance's heartbeat; `start()` before serving, so its runs are not taken for orphans. */
  readonly instances: InstanceRegistry;
  /**
   * The queue of background runs: depth by `counts()`, job outcomes by `onEvent()`. Its runs are
   * taken by the pipelines module, which knows how to continue both kinds.
   */
  readonly jobs: JobQueue;
  /** Decisions on tool calls waiting for a person's approval, and their deadlines. */
  readonly approvals: ApprovalService;
  /** GET /v1/executions/{id}, its steps, its event stream and the decisions on its calls. */
  readonly plugin: FeaturePlugin;
  close(): Promise<void>;
}

/** The PostgreSQL NOTIFY channel and default Redis channel of execution changes. */
const executionChangesChannel = 'platform_execution_changes';

/**
 * How execution changes reach the other instances: Redis pub/sub when REDIS_URL is set (it needs
 * no database connection of its own and works behind transaction-pooling proxies), else
 * PostgreSQL LISTEN/NOTIFY, else nothing: SQLite without Redis is one instance's.
 */
function executionTransport(dependencies: ExecutionsModuleDependencies): ChangeTransport | null {
  const { config, storage, redis, logger } = dependencies;
  if (redis !== null) {
    return redisChangeTransport(
      redis,
      dependencies.executionChannel ?? dependencies.redisName(executionChangesChannel),
      logger,
    );
  }
  if (config.database.kind === 'postgres') {
    return postgresChangeTransport(
      new PostgresListener({
        url: config.database.url,
        db: storage.db,
        channel: executionChangesChannel,
        logger,
      }),
    );
  }
  return null;
}

/**
 * The queue of background runs: BullMQ on Redis when REDIS_URL is set (loaded only then), shared
 * by every instance on that Redis and prefix; else in this process.
 */
async function createJobQueue(dependencies: ExecutionsModuleDependencies): Promise<JobQueue> {
  const { config, redis, logger } = dependencies;
  const onError = (job: RunJob, error: unknown) =>
    logger.error(
      { err: error, execution_id: job.executionId || undefined },
      'background job failed',
    );
  if (redis === null) {
    return new MemoryJobQueue({ concurrency: config.jobs.concurrency, onError });
  }
  const { BullmqJobQueue } = await import('../../jobs/bullmq-job-queue.js');
  return new BullmqJobQueue({
    redis,
    prefix: dependencies.jobPrefix ?? dependencies.redisName('bull'),
    concurrency: config.jobs.concurrency,
    lockMs: config.jobs.lockMs,
    enqueueWaitMs: config.jobs.enqueueWaitMs,
    onError,
    onHeld: (job) =>
      logger.warn(
        { execution_id: job.executionId },
        'Redis did not take a background run in time: it is recorded, and queued when Redis answers',
      ),
  });
}

/** The background-run queue's depth and outcomes, as Prometheus metrics (`platform_jobs_*`). */
function observeJobs(jobs: JobQueue, metrics: PlatformMetrics): void {
  const queue = 'pipeline-runs';
  // Start times of this instance's running jobs (at most the queue's concurrency).
  const started = new Map<string, number>();
  const ended = (executionId: string, outcome: 'completed' | 'failed' | 'retried') => {
    const since = started.get(executionId);
    started.delete(executionId);
    metrics.jobEnded(queue, outcome, since === undefined ? 0 : (performance.now() - since) / 1000);
  };
  jobs.onEvent((event) => {
    if (event.type === 'started') started.set(event.job.executionId, performance.now());
    else if (event.type === 'completed') ended(event.job.executionId, 'completed');
    else if (event.type === 'failed') ended(event.job.executionId, 'failed');
    // Handed back by a stopping instance: it runs again elsewhere.
    else if (event.type === 'handed-over') ended(event.job.executionId, 'retried');
    jobs.counts().then(
      (counts) => metrics.setJobCounts(queue, counts),
      () => undefined,
    );
  });
}

/** The execution records and their change feed, listening once this resolves. */
async function startExecutions(
  dependencies: ExecutionsModuleDependencies,
  closers: Closers,
  instanceId: string,
  repository: ExecutionsRepository,
): Promise<ExecutionService> {
  const feed = new ExecutionChangeFeed({
    transport: executionTransport(dependencies),
    origin: instanceId,
    logger: dependencies.logger,
  });
  closers.add('execution change feed', () => feed.close());
  try {
    await feed.start();
  } catch (error) {
    throw new Error(`Cannot listen for execution changes (${feed.reach})`, { cause: error });
  }
  return new ExecutionService({
    repository,
    steps: new ExecutionStepsRepository(dependencies.storage.db),
    feed,
    conversations: dependencies.conversations,
    instanceId,
    now: dependencies.now,
  });
}

async function wireExecutions(
  dependencies: ExecutionsModuleDependencies,
  closers: Closers,
): Promise<ExecutionsModule> {
  const { storage, logger, now } = dependencies;
  const instanceId = newId('inst');
  const repository = new ExecutionsRepository(storage.db);
  const executions = await startExecutions(dependencies, closers, instanceId, repository);
  const jobs = await createJobQueue(dependencies);
  const approvals = new ApprovalService({
    executions,
    queue: jobs,
    logger,
    arguments: dependencies.arguments,
    now,
  });
  // Runs of a stopped instance are queued again by the others, and runs whose tool calls were not
  // approved in time end, whichever instance paused them.
  const instances = new InstanceRegistry({
    id: instanceId,
    repository,
    executions,
    requeue: (run) => jobs.enqueue(run),
    sweep: () => approvals.expire(),
    logger,
    staleAfterMs: dependencies.config.jobs.instanceTimeoutMs,
    heartbeatMs: Math.floor(dependencies.config.jobs.instanceTimeoutMs / 6),
    now,
  });
  // Closed last-added first: the heartbeat stops after the queue has handed its running jobs over
  // (a heartbeat failing against a database that is going away is no reason to fail a shutdown),
  // and no deadline fires once the queue is closing.
  closers.add('instance registry', () => instances.stop().catch(() => undefined));
  closers.add('job queue', () => jobs.close());
  closers.add('approval deadlines', () => approvals.close());
  observeJobs(jobs, dependencies.metrics);
  return {
    service: executions,
    instances,
    jobs,
    approvals,
    plugin: executionsPlugin({
      executions,
      credentialWatch: dependencies.credentialWatch,
      approvals,
    }),
    close: () => closers.closeAll(),
  };
}

/**
 * Builds the module: once it resolves, execution changes are heard from every instance (the
 * heartbeat begins with `instances.start()`, before serving; the queue's runs are taken once the
 * pipelines module starts working it). When a step fails, what the earlier steps started is
 * closed, last first, and the step's error thrown.
 */
export async function createExecutionsModule(
  dependencies: ExecutionsModuleDependencies,
): Promise<ExecutionsModule> {
  const closers = new Closers();
  try {
    return await wireExecutions(dependencies, closers);
  } catch (error) {
    await closers
      .closeAll()
      .catch((failure: unknown) =>
        dependencies.logger.warn(
          { err: failure },
          'closing what the executions module had started before a failed start',
        ),
      );
    throw error;
  }
}
