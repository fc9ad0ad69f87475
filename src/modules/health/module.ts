// The health module, wired: the health check over the database and Redis it is lent, and the
// feature catalog, each with its HTTP plugin for app.ts to register.
import type { Redis } from 'ioredis';
import type { AppConfig } from '../../config/config.js';
import { featuresPlugin, type VoiceChatReadiness } from './features.routes.js';
import { HealthService } from './health-service.js';
import { healthPlugin, type HealthPlugin } from './health.routes.js';

export interface HealthModuleDependencies {
  readonly config: Pick<AppConfig, 'serviceName' | 'version' | 'features'>;
  /** Answers when the database does; rejects after `timeoutMs` otherwise. */
  readonly pingDatabase: (timeoutMs: number) => Promise<void>;
  readonly redis: Redis | null;
  /** The speech models' state: voice_chat is listed enabled only when both kinds are available. */
  readonly voiceChatReadiness: VoiceChatReadiness;
}

export interface HealthModule {
  readonly service: HealthService;
  /** GET /v1/health. */
  readonly plugin: HealthPlugin;
  /** GET /v1/features: a plugin of its own, since the document lists it after the metrics route. */
  readonly featuresPlugin: HealthPlugin;
}

export function createHealthModule(dependencies: HealthModuleDependencies): HealthModule {
  const { config, pingDatabase, redis, voiceChatReadiness } = dependencies;
  const service = new HealthService({ pingDatabase, redis });
  // The database and Redis it pings belong to the service, which closes them itself: the module
  // has nothing to close.
  return {
    service,
    plugin: healthPlugin(service, config),
    featuresPlugin: featuresPlugin(config, voiceChatReadiness),
  };
}
