// Builds the real application over a real database for HTTP tests, and tears it down again.
import { randomBytes } from 'node:crypto';
import { pino, type Logger } from 'pino';
import { buildApp } from '../../src/app.js';
import { generateApiKey } from '../../src/modules/accounts/api-key-format.js';
import type { LoadConfigOptions } from '../../src/config/load-config.js';
import { loadConfig } from '../../src/config/load-config.js';
import type { App } from '../../src/http/types.js';
import {
  createServices,
  type ServiceContainer,
  type ServiceOverrides,
} from '../../src/services.js';
import type { DialectUnderTest, TestDatabase } from './dialects.js';

export interface TestApp {
  app: App;
  services: ServiceContainer;
  adminKey: string;
  database: TestDatabase;
  close(): Promise<void>;
}

export interface TestAppOptions {
  dialect: DialectUnderTest;
  /** Reuse a database (several instances of the service over one database). */
  database?: TestDatabase;
  env?: Record<string, string>;
  overrides?: LoadConfigOptions['overrides'];
  services?: ServiceOverrides;
  adminKey?: string;
  /** The service's logger (default: silent, or TEST_LOG_LEVEL); a test may read what is logged. */
  logger?: Logger;
}

/**
 * A test that lists models gets exactly those: the built-in offline speech engines a config file
 * keeps for kinds it does not list (speech.builtin_engines) are left out unless it asks for them.
 */
function exactCatalog(
  overrides: NonNullable<LoadConfigOptions['overrides']>,
): NonNullable<LoadConfigOptions['overrides']> {
  if (overrides.models === undefined) return overrides;
  return { ...overrides, speech: { builtin_engines: false, ...overrides.speech } };
}

export async function startTestApp(options: TestAppOptions): Promise<TestApp> {
  const database = options.database ?? (await options.dialect.create({ migrated: true }));
  const adminKey = options.adminKey ?? generateApiKey();
  const config = loadConfig({
    env: {
      DATABASE_URL: database.url,
      // System programs (PocketSphinx) are found on the PATH, as the service's would be.
      PATH: process.env.PATH ?? '',
      LOG_LEVEL: 'silent',
      PLATFORM_ADMIN_KEY: adminKey,
      ...options.env,
    },
    ...(options.overrides === undefined ? {} : { overrides: exactCatalog(options.overrides) }),
  });
  const logger = options.logger ?? pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
  // Each test app works its own queue unless told to share one (tests share one Redis).
  const services = await createServices(config, logger, {
    jobPrefix: `test-jobs-${randomBytes(6).toString('hex')}`,
    ...options.services,
  });
  await services.accounts.bootstrap(config.auth.adminKey);
  const app = await buildApp(services, logger);
  const ownsDatabase = options.database === undefined;
  return {
    app,
    services,
    adminKey,
    database,
    async close() {
      await app.close();
      await services.close();
      if (ownsDatabase) await database.drop();
    },
  };
}

export function bearer(key: string): Record<string, string> {
  return { authorization: `Bearer ${key}` };
}

/** The first line of the service's `/metrics` (read with the admin key) that `matches`. */
export async function metricLine(
  harness: Pick<TestApp, 'app' | 'adminKey'>,
  matches: (line: string) => boolean,
): Promise<string | undefined> {
  const metrics = await harness.app.inject({
    method: 'GET',
    url: '/metrics',
    headers: bearer(harness.adminKey),
  });
  return metrics.body.split('\n').find(matches);
}

export interface CreatedKeyJson {
  id: string;
  key: string;
  account_id: string;
  scopes: string[];
  tier: string;
  revoked_at: string | null;
  [field: string]: unknown;
}

/** Creates a key through the HTTP API with `adminKey`. */
export async function createKey(
  app: App,
  adminKey: string,
  body: Record<string, unknown>,
): Promise<CreatedKeyJson> {
  const response = await app.inject({
    method: 'POST',
    url: '/v1/api-keys',
    headers: bearer(adminKey),
    payload: { name: 'test key', ...body },
  });
  if (response.statusCode !== 201) {
    throw new Error(`creating a key failed: ${response.statusCode} ${response.body}`);
  }
  return response.json<CreatedKeyJson>();
}

export async function createAccount(
  app: App,
  ownerKey: string,
  name: string,
  tier?: string,
): Promise<{ id: string; admin_key: string; admin_key_id: string }> {
  const response = await app.inject({
    method: 'POST',
    url: '/v1/accounts',
    headers: bearer(ownerKey),
    payload: tier === undefined ? { name } : { name, tier },
  });
  if (response.statusCode !== 201) {
    throw new Error(`creating an account failed: ${response.statusCode} ${response.body}`);
  }
  return response.json();
}
