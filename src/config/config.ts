// The typed, frozen configuration every other module receives; built only by load-config.ts.
import type { FeatureName } from '../features/catalog.js';

export interface RateLimitTier {
  readonly perMinute: number;
  readonly perDay: number;
}

export type DatabaseConfig =
  | { readonly kind: 'sqlite'; readonly path: string }
  | { readonly kind: 'postgres'; readonly url: string };

export interface AppConfig {
  readonly serviceName: string;
  readonly version: string;
  /** Where each value came from, for start-up logs: the config file path or null. */
  readonly configFile: string | null;
  readonly server: {
    readonly host: string;
    readonly port: number;
    readonly bodyLimitBytes: number;
    /** Address ranges whose X-Forwarded-For is believed; empty means none. */
    readonly trustProxy: readonly string[];
    readonly shutdownTimeoutMs: number;
    readonly logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  };
  readonly database: DatabaseConfig;
  readonly redisUrl: string | null;
  readonly auth: {
    readonly adminKey: string | null;
    /** When set, key hashes are HMAC-SHA256 with this secret; otherwise plain SHA-256. */
    readonly apiKeySecret: string | null;
    readonly keyCacheTtlMs: number;
    readonly lastUsedWriteIntervalMs: number;
  };
  readonly rateLimits: {
    readonly defaultTier: string;
    readonly tiers: Readonly<Record<string, RateLimitTier>>;
  };
  readonly features: Readonly<Record<FeatureName, boolean>>;
}
