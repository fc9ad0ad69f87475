// Wiring only: loadConfig() → createServices() → bootstrap → buildApp() → listen(), and shutdown.
import closeWithGrace from 'close-with-grace';
import { buildApp } from './app.js';
import { ConfigError, loadConfig } from './config/load-config.js';
import { startMetricsServer, type MetricsServer } from './http/metrics-server.js';
import { createLogger } from './logger.js';
import { createServices, type Services } from './services.js';
import { keyFields } from './http/audit-targets.js';
import type { BootstrapResult } from './modules/accounts/account-service.js';
import { systemActor } from './modules/audit/module.js';

function printAdminKey(key: string, port: number, host: string): void {
  const line = '='.repeat(78);
  process.stdout.write(
    `\n${line}\n` +
      'First start: created the platform owner account and its admin key.\n' +
      'This key is shown ONCE. Store it now; only its hash is kept.\n\n' +
      `  ${key}\n\n` +
      `Try it:  curl -H "Authorization: Bearer ${key}" http://${host}:${port}/v1/features\n` +
      `${line}\n\n`,
  );
}

/** The owner account and its admin key, made at first start, are the audit log's first records. */
async function recordBootstrap(
  services: Services,
  bootstrap: Extract<BootstrapResult, { created: true }>,
): Promise<void> {
  const { account, keyRecord } = bootstrap;
  const common = { accountId: account.id, actor: systemActor, ip: null };
  await services.audit.record({
    ...common,
    action: 'account.create',
    target: { type: 'account', id: account.id },
    changes: { before: null, after: { name: account.name, kind: account.kind } },
  });
  await services.audit.record({
    ...common,
    action: 'api_key.create',
    target: { type: 'api_key', id: keyRecord.id },
    changes: { before: null, after: keyFields(keyRecord) },
  });
}

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
  const logger = createLogger(config.serviceName, config.server.logLevel);
  const services = await createServices(config, logger);
  const bootstrap = await services.accounts.bootstrap(config.auth.adminKey);
  if (bootstrap.created) await recordBootstrap(services, bootstrap);
  const app = await buildApp(services, logger);
  let metricsServer: MetricsServer | null = null;

  closeWithGrace({ delay: config.server.shutdownTimeoutMs }, async ({ signal, err }) => {
    if (err !== undefined) logger.error({ err }, 'shutting down after an unexpected error');
    else logger.info({ signal }, 'shutting down: finishing in-flight requests');
    await app.close();
    await metricsServer?.close();
    await services.close();
    logger.info('stopped');
  });

  // Registered before serving, so that this instance's runs are never mistaken for orphans.
  await services.instances.start();
  // What the first request would pay for with the event loop held, loaded before serving.
  await services.models.warmUp();
  await app.listen({ host: config.server.host, port: config.server.port });
  if (config.metrics.port !== null) {
    metricsServer = await startMetricsServer(
      services.metrics,
      config.metrics.host,
      config.metrics.port,
    );
    logger.info(`metrics on http://${config.metrics.host}:${metricsServer.port}/metrics`);
  }
  services.startBackgroundWork();
  logger.info(
    {
      database: services.storage.description,
      rate_limit_store: services.rateLimiter.storeKind,
      config_file: config.configFile,
    },
    `listening on http://${config.server.host}:${config.server.port}`,
  );
  if (bootstrap.created && bootstrap.generatedKey !== null) {
    printAdminKey(bootstrap.generatedKey, config.server.port, config.server.host);
  } else if (!bootstrap.created && config.auth.adminKey !== null) {
    logger.warn(
      'PLATFORM_ADMIN_KEY is only used on first start with an empty database; it was ignored',
    );
  }
}

main().catch((error: unknown) => {
  process.stderr.write(
    `Failed to start: ${error instanceof Error ? error.message : String(error)}\n`,
  );
  if (error instanceof Error && error.cause !== undefined) {
    const cause = error.cause instanceof Error ? error.cause.message : JSON.stringify(error.cause);
    process.stderr.write(`  cause: ${cause}\n`);
  }
  process.exit(1);
});
