// The budgets module, wired: the budgets' store (Redis when REDIS_URL is set, else PostgreSQL, else
// this process's memory for SQLite's one instance),
// the gate every model call's meter reserves through (built before the model registry, which the
// usage ledger's meter is given to), and the HTTP plugin of /v1/budgets for app.ts to register.
import type { Redis } from 'ioredis';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { ApiKeysRepository } from '../accounts/api-keys.repository.js';
import type { FeaturePlugin } from '../../http/feature-plugin.js';
import type { DatabaseSchema } from '../../storage/schema.js';
import type { BudgetGate } from '../usage/ledger-meter.js';
import { StoreBudgetGate, type BudgetObserver } from './budget-gate.js';
import { BudgetService } from './budget-service.js';
import type { BudgetStore } from './budget-store.js';
import { budgetsPlugin } from './budgets.routes.js';
import { BudgetsRepository } from './budgets.repository.js';
import { DatabaseBudgetStore } from './budget-windows.repository.js';
import { RedisBudgetStore } from './redis-budget-store.js';
import { MemoryBudgetStore } from './memory-budget-store.js';
import { BudgetPathCache } from './budget-path-cache.js';

export interface BudgetsModuleDependencies {
  readonly storage: { readonly db: Kysely<DatabaseSchema>; readonly kind: 'sqlite' | 'postgres' };
  readonly redis: Redis | null;
  /** A Redis key's name under the configured prefix. */
  readonly redisName: (name: string) => string;
  /** `usage.budgets_fail_open`: calls go on unchecked when the store cannot be reached. */
  readonly failOpen: boolean;
  /** A key budget's key must be one of the account's. */
  readonly keys: Pick<ApiKeysRepository, 'findInAccount'>;
  readonly observer?: BudgetObserver;
  readonly logger: Logger;
  readonly now: () => number;
}

export interface BudgetsModule {
  readonly gate: BudgetGate;
  readonly service: BudgetService;
  readonly plugin: FeaturePlugin;
}

export function createBudgetsModule(dependencies: BudgetsModuleDependencies): BudgetsModule {
  const { storage, keys, logger, now } = dependencies;
  const store = storeOf(dependencies);
  const budgets = new BudgetsRepository(storage.db);
  const paths = new BudgetPathCache(budgets);
  const gate = new StoreBudgetGate({
    budgets: paths,
    store,
    failOpen: dependencies.failOpen,
    observer: dependencies.observer,
    logger,
    now,
  });
  const service = new BudgetService({ budgets, store, keys, now, onChange: () => paths.changed() });
  // The store's connections are the service's (the database, Redis): nothing of its own to close.
  return { gate, service, plugin: budgetsPlugin(service) };
}

/**
 * Where the windows live: Redis when configured (every instance reserves there); else, on
 * PostgreSQL (instances may share it), the database; else — SQLite, one instance — this process.
 */
function storeOf({ storage, redis, redisName }: BudgetsModuleDependencies): BudgetStore {
  if (redis !== null) return new RedisBudgetStore(redis, redisName);
  if (storage.kind === 'postgres') return new DatabaseBudgetStore(storage.db, storage.kind);
  return new MemoryBudgetStore();
}
