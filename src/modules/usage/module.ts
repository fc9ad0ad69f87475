// The usage module, wired: the ledger every model call is recorded in (built early: the model
// registry meters its calls with it), and the read side — its storage and service from the
// database it is lent, and its HTTP plugin for app.ts to register.
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { AppConfig } from '../../config/config.js';
import { unmetered, type UsageMeter } from '../../models/metering.js';
import type { Storage } from '../../storage/database.js';
import type { DialectAdapter } from '../../storage/dialects/dialect.js';
import { LedgerMeter, type BudgetGate, type UsageObserver } from './ledger-meter.js';
import { UsageLedger } from './usage-ledger.js';
import { UsageRecordsRepository } from './usage-records.repository.js';
import type { ApiKeysRepository } from '../accounts/api-keys.repository.js';
import type { DatabaseSchema } from '../../storage/schema.js';
import { UsageService } from './usage-service.js';
import { UsageRepository } from './usage.repository.js';
import { UsageActivityRepository } from './usage-activity.repository.js';
import { UsageExportRepository } from './usage-export.repository.js';
import { usagePlugin, type UsagePlugin } from './usage.routes.js';

export interface UsageModuleDependencies {
  readonly db: Kysely<DatabaseSchema>;
  /** Time buckets are computed in SQL, which each dialect writes its own way. */
  readonly dialect: DialectAdapter['kind'];
  /** The keys' names and display forms for the by-key groups. */
  readonly keys: Pick<ApiKeysRepository, 'findInAccount'>;
  /** Writes this instance's buffered records, so that a read sees the calls just answered. */
  readonly flushLedger?: () => Promise<void>;
  readonly now: () => number;
}

export interface UsageModule {
  readonly service: UsageService;
  readonly plugin: UsagePlugin;
}

export function createUsageModule(dependencies: UsageModuleDependencies): UsageModule {
  const { db, dialect, keys, flushLedger, now } = dependencies;
  const service = new UsageService({
    usage: new UsageRepository(db, dialect),
    activity: new UsageActivityRepository(db),
    records: new UsageExportRepository(db),
    keys,
    flushLedger,
    now,
  });
  // Usage reads the ledger the database holds; it holds no connection, thread or timer of its own.
  return {
    service,
    plugin: usagePlugin(service),
  };
}

export interface UsageLedgerDependencies {
  readonly config: AppConfig['usage'];
  readonly storage: Pick<Storage, 'db' | 'kind'>;
  readonly logger: Logger;
  /** Told of each record (the Prometheus counters of cost and tokens). */
  readonly observer?: UsageObserver;
  readonly now: () => number;
  /** The budgets every call reserves on before it is made (the budgets module's gate). */
  readonly budgets?: BudgetGate;
}

export interface UsageLedgerModule {
  readonly ledger: UsageLedger;
  readonly records: UsageRecordsRepository;
  /** Every model call's meter (the registry's, the pass-through's, the speech service's). */
  readonly meter: UsageMeter;
  /** Writes what is still buffered. */
  close(): Promise<void>;
}

export function createUsageLedger(dependencies: UsageLedgerDependencies): UsageLedgerModule {
  const { config, storage, logger, observer, now } = dependencies;
  const records = new UsageRecordsRepository(storage.db, storage.kind);
  const ledger = new UsageLedger({
    repository: records,
    logger,
    flushIntervalMs: config.flushIntervalMs,
    retentionDays: config.retentionDays,
    now,
  });
  if (!config.enabled) {
    logger.warn(
      'usage.enabled is false (USAGE_LEDGER=false): no usage record is written and no budget holds',
    );
  }
  const meter = config.enabled
    ? new LedgerMeter({
        ledger,
        now,
        ...(observer === undefined ? {} : { observer }),
        ...(dependencies.budgets === undefined ? {} : { budgets: dependencies.budgets }),
      })
    : unmetered;
  return { ledger, records, meter, close: () => ledger.close() };
}
