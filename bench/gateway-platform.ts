// The platform as the gateway benchmarks run it: the built service (`dist/main.js`) on a SQLite
// file, its one model `bench-upstream` over the fake upstream, rate limits out of the way.
import type { ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { benchDeployments, benchUpstreamModel, freePort, startServer } from './support.js';

export interface GatewayPlatformOptions {
  directory: string;
  /** Names its config, database and log files in `directory`. */
  name: string;
  upstreamUrl: string;
  adminKey: string;
  /** The model's `pricing`, if any. */
  pricing?: Record<string, number>;
  /** Serve the model through this many deployments (all over the same upstream); 0: none. */
  deployments?: number;
  /** More environment for the service. */
  env?: Record<string, string>;
  /** Node's own arguments (a profiler's), before the script. */
  nodeArgs?: string[];
  /** The service's entry (default `dist/main.js`; another build's, to compare with it). */
  script?: string;
  /** A command that runs Node (valgrind's, with its arguments), before Node itself. */
  launcher?: string[];
  /** How long it may take to answer (default a minute). */
  readyTimeoutMs?: number;
}

export async function startGatewayPlatform(
  options: GatewayPlatformOptions,
): Promise<{ server: ChildProcess; base: string }> {
  const { directory, name, upstreamUrl, adminKey } = options;
  const configFile = path.join(directory, `${name}.config.json`);
  writeFileSync(
    configFile,
    JSON.stringify({
      default_model: 'bench-upstream',
      models: [
        {
          ...benchUpstreamModel(upstreamUrl, 1024),
          ...(options.pricing === undefined ? {} : { pricing: options.pricing }),
          ...((options.deployments ?? 0) > 0
            ? {
                deployments: benchDeployments(upstreamUrl, options.deployments ?? 0),
              }
            : {}),
        },
      ],
      rate_limits: {
        default_tier: 'bench',
        tiers: { bench: { per_minute: 1_000_000_000, per_day: 1_000_000_000 } },
      },
    }),
  );
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const [command, ...launcherArgs] = [...(options.launcher ?? []), process.execPath];
  const server = await startServer(
    command,
    [...launcherArgs, ...(options.nodeArgs ?? []), options.script ?? 'dist/main.js'],
    {
      PORT: String(port),
      DATABASE_URL: `sqlite:${path.join(directory, `${name}.db`)}`,
      PLATFORM_ADMIN_KEY: adminKey,
      PLATFORM_CONFIG: configFile,
      MODEL_AUTO_PULL: 'false',
      LOG_LEVEL: 'info',
      ...options.env,
    },
    path.join(directory, `${name}.log`),
    `${base}/v1/health`,
    options.readyTimeoutMs,
  );
  return { server, base };
}
