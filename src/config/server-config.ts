// The HTTP server's configuration: address, limits, timeouts, proxies and browser origins, the
// metrics port and the dashboard's files. Top-level keys of the config file.
import { isIP } from 'node:net';
import path from 'node:path';
import Type, { type Static, type TObject } from 'typebox';
import { packageRoot } from '../runtime-paths.js';
import {
  HttpUrl,
  NonEmptyString,
  OptionalInteger,
  TextList,
  toList,
  type EnvReader,
  type Problems,
} from './config-kit.js';

export const serverFileProperties = {
  host: Type.Optional(NonEmptyString()),
  port: OptionalInteger(0, 65535),
  trust_proxy: Type.Optional(TextList()),
  body_limit_bytes: OptionalInteger(1024, 1024 * 1024 * 1024),
  shutdown_timeout_ms: OptionalInteger(0, 600_000),
  request_timeout_ms: OptionalInteger(1000, 3_600_000),
  headers_timeout_ms: OptionalInteger(1000, 600_000),
  keep_alive_timeout_ms: OptionalInteger(1000, 600_000),
  cors_origins: Type.Optional(TextList()),
  public_url: Type.Optional(HttpUrl()),
  web_app_dir: Type.Optional(NonEmptyString()),
  metrics_port: OptionalInteger(1, 65535),
  metrics_host: Type.Optional(NonEmptyString()),
};

type ServerFile = Static<TObject<typeof serverFileProperties>>;

/** The environment's server settings, named as in the file; lists already checked. */
export interface ServerEnv extends Omit<ServerFile, 'trust_proxy' | 'cors_origins'> {
  trust_proxy?: string[];
  cors_origins?: string[];
}

const proxyKeywords = new Set(['loopback', 'linklocal', 'uniquelocal']);

function isAddressRange(value: string): boolean {
  if (proxyKeywords.has(value)) return true;
  const [address, prefix, ...rest] = value.split('/');
  if (rest.length > 0 || address === undefined) return false;
  const family = isIP(address);
  if (family === 0) return false;
  if (prefix === undefined) return true;
  if (!/^\d{1,3}$/.test(prefix)) return false;
  return Number(prefix) <= (family === 4 ? 32 : 128);
}

/** Reports each entry of a trusted-proxy list that is not an address, a range or a keyword. */
function checkRanges(values: readonly string[], where: string, problems: Problems): boolean {
  const bad = values.filter((value) => !isAddressRange(value));
  for (const value of bad) {
    problems.push(
      `${where}: '${value}' is not an IP address, a CIDR range or one of loopback, linklocal, uniquelocal`,
    );
  }
  return bad.length === 0;
}

/** A browser origin exactly as browsers send it: scheme, host and port, no path. */
function isOrigin(value: string): boolean {
  if (!URL.canParse(value)) return false;
  const parsed = new URL(value);
  return /^https?:$/.test(parsed.protocol) && parsed.origin === value;
}

function checkOrigins(values: readonly string[], where: string, problems: Problems): boolean {
  const bad = values.filter((value) => !isOrigin(value));
  for (const value of bad) {
    problems.push(
      value === '*'
        ? `${where}: '*' is not allowed: credentials (the session cookie) need each origin listed`
        : `${where}: '${value}' is not an origin like 'https://app.example.com' or 'http://localhost:5173' (scheme, host, optional port; no path or trailing slash)`,
    );
  }
  return bad.length === 0;
}

/** The service's public address (`https://ai.example.com`, a path allowed): its origin is kept. */
const originOf = (url: string) => new URL(url.trim()).origin;

/**
 * Checks the entries of the file's lists of trusted proxies and browser origins, which the schema
 * takes as any text; run on the file as read, so that they are reported with its other problems.
 */
export function checkServerLists(
  data: unknown,
  where: (path: string) => string,
  problems: Problems,
): void {
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return;
  const { trust_proxy: trustProxy, cors_origins: corsOrigins } = data as Record<string, unknown>;
  const texts = (value: unknown[]) => value.filter((item) => typeof item === 'string');
  if (typeof trustProxy === 'string' || Array.isArray(trustProxy)) {
    const entries = typeof trustProxy === 'string' ? toList(trustProxy) : texts(trustProxy);
    checkRanges(
      entries.map((entry) => entry.trim()),
      where('trust_proxy'),
      problems,
    );
  }
  if (typeof corsOrigins === 'string')
    checkOrigins(toList(corsOrigins), where('cors_origins'), problems);
  if (Array.isArray(corsOrigins)) {
    corsOrigins.forEach((origin, index) => {
      if (typeof origin === 'string')
        checkOrigins([origin], where(`cors_origins.${index}`), problems);
    });
  }
}

export function readServerEnv(env: EnvReader, problems: Problems): ServerEnv {
  const trustProxy = env.list('TRUST_PROXY');
  const corsOrigins = env.list('CORS_ORIGINS');
  const publicUrl = env.url('PUBLIC_URL');
  return {
    host: env.text('HOST'),
    port: env.integer('PORT', 0, 65535),
    trust_proxy:
      trustProxy !== undefined && checkRanges(trustProxy, 'TRUST_PROXY', problems)
        ? trustProxy
        : undefined,
    body_limit_bytes: env.integer('BODY_LIMIT_BYTES', 1024, 1024 * 1024 * 1024),
    shutdown_timeout_ms: env.integer('SHUTDOWN_TIMEOUT_MS', 0, 600_000),
    request_timeout_ms: env.integer('REQUEST_TIMEOUT_MS', 1000, 3_600_000),
    headers_timeout_ms: env.integer('HEADERS_TIMEOUT_MS', 1000, 600_000),
    keep_alive_timeout_ms: env.integer('KEEP_ALIVE_TIMEOUT_MS', 1000, 600_000),
    cors_origins:
      corsOrigins !== undefined && checkOrigins(corsOrigins, 'CORS_ORIGINS', problems)
        ? corsOrigins
        : undefined,
    public_url: publicUrl,
    web_app_dir: env.text('WEB_APP_DIR'),
    metrics_port: env.integer('METRICS_PORT', 1, 65535),
    metrics_host: env.text('METRICS_HOST'),
  };
}

/** The server's settings: the environment's, else the file's, else the defaults; cross-checked. */
export function serverConfig(
  fromEnv: ServerEnv,
  file: ServerFile,
  context: { cwd: string; problems: Problems },
) {
  const { cwd, problems } = context;
  const requestTimeoutMs = fromEnv.request_timeout_ms ?? file.request_timeout_ms ?? 30_000;
  const headersTimeoutMs = fromEnv.headers_timeout_ms ?? file.headers_timeout_ms ?? 10_000;
  if (headersTimeoutMs > requestTimeoutMs) {
    problems.push(
      'HEADERS_TIMEOUT_MS (headers_timeout_ms) must not exceed REQUEST_TIMEOUT_MS (request_timeout_ms): the headers are part of the request',
    );
  }
  const host = fromEnv.host ?? file.host ?? '127.0.0.1';
  const port = fromEnv.port ?? file.port ?? 8080;
  const metricsPort = fromEnv.metrics_port ?? file.metrics_port ?? null;
  const metricsHost = fromEnv.metrics_host ?? file.metrics_host ?? host;
  if (metricsPort !== null && metricsPort === port && metricsHost === host) {
    problems.push(
      'METRICS_PORT (metrics_port) must differ from PORT (port): metrics get an address of their own',
    );
  }
  const publicUrl = fromEnv.public_url ?? file.public_url;
  const webAppDirectory = fromEnv.web_app_dir ?? file.web_app_dir;
  return {
    server: {
      host,
      port,
      bodyLimitBytes: fromEnv.body_limit_bytes ?? file.body_limit_bytes ?? 1024 * 1024,
      trustProxy:
        fromEnv.trust_proxy ?? toList(file.trust_proxy ?? []).map((entry) => entry.trim()),
      shutdownTimeoutMs: fromEnv.shutdown_timeout_ms ?? file.shutdown_timeout_ms ?? 10_000,
      requestTimeoutMs,
      headersTimeoutMs,
      keepAliveTimeoutMs: fromEnv.keep_alive_timeout_ms ?? file.keep_alive_timeout_ms ?? 72_000,
      corsOrigins: fromEnv.cors_origins ?? toList(file.cors_origins ?? []),
      publicOrigin: publicUrl === undefined ? null : originOf(publicUrl),
    },
    metrics: { port: metricsPort, host: metricsHost },
    webApp: {
      // The built web app next to the server's own files: `<package>/web/dist`.
      directory:
        webAppDirectory !== undefined
          ? path.resolve(cwd, webAppDirectory)
          : path.join(packageRoot, 'web', 'dist'),
    },
  };
}
