// The usage module, wired: its storage and service from the database it is lent, and its HTTP
// plugin for app.ts to register.
import type { Kysely } from 'kysely';
import type { DialectAdapter } from '../../storage/dialects/dialect.js';
import type { ApiKeysRepository } from '../accounts/api-keys.repository.js';
import type { DatabaseSchema } from '../../storage/schema.js';
import { UsageService } from './usage-service.js';
import { UsageRepository } from './usage.repository.js';
import { usagePlugin, type UsagePlugin } from './usage.routes.js';

export interface UsageModuleDependencies {
  readonly db: Kysely<DatabaseSchema>;
  /** Time buckets are computed in SQL, which each dialect writes its own way. */
  readonly dialect: DialectAdapter['kind'];
  /** The keys' names and display forms for the by-key groups. */
  readonly keys: Pick<ApiKeysRepository, 'findInAccount'>;
  readonly now: () => number;
}

export interface UsageModule {
  readonly service: UsageService;
  readonly plugin: UsagePlugin;
}

export function createUsageModule(dependencies: UsageModuleDependencies): UsageModule {
  const { db, dialect, keys, now } = dependencies;
  const service = new UsageService({ usage: new UsageRepository(db, dialect), keys, now });
  // Usage reads what other areas stored; it holds no connection, thread or timer of its own.
  return {
    service,
    plugin: usagePlugin(service),
  };
}
