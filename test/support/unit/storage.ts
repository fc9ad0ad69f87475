// Real storage for unit tests, opened as the service opens it: the configuration loader turns the
// test database's URL into its settings, and openStorage migrates it. No app, no HTTP.
import { pino, type Logger } from 'pino';
import type { Account } from '../../../src/modules/accounts/account.js';
import type { AppConfig } from '../../../src/config/config.js';
import { loadConfig, type LoadConfigOptions } from '../../../src/config/load-config.js';
import { newId } from '../../../src/ids.js';
import { openStorage, type Storage } from '../../../src/storage/database.js';
import { AccountsRepository } from '../../../src/modules/accounts/accounts.repository.js';
import type { DialectUnderTest } from '../dialects.js';

export interface UnitStorage {
  config: AppConfig;
  storage: Storage;
  logger: Logger;
  close(): Promise<void>;
}

export interface UnitStorageOptions {
  env?: Record<string, string>;
  overrides?: LoadConfigOptions['overrides'];
}

/** A fresh, migrated database of `dialect` and the configuration that names it. */
export async function openUnitStorage(
  dialect: DialectUnderTest,
  options: UnitStorageOptions = {},
): Promise<UnitStorage> {
  const database = await dialect.create();
  const config = loadConfig({
    env: { DATABASE_URL: database.url, LOG_LEVEL: 'silent', ...options.env },
    ...(options.overrides === undefined ? {} : { overrides: options.overrides }),
  });
  const storage = await openStorage(config.database);
  return {
    config,
    storage,
    logger: pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }),
    async close() {
      await storage.close();
      await database.drop();
    },
  };
}

/** A member account stored directly: most services need only its row (keys, rows it owns). */
export async function insertAccount(
  storage: Storage,
  tier: string | null = null,
): Promise<Account> {
  const account: Account = {
    id: newId('acct'),
    name: 'unit test account',
    kind: 'member',
    createdAt: new Date().toISOString(),
    tier,
  };
  await new AccountsRepository(storage.db).insert(account);
  return account;
}
