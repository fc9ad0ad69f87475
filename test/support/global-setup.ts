// Once per `vitest run`: a PostgreSQL database of this run's own, holding every test schema, and
// dropped whole at the end. Dropping a schema while another process introspects the catalog
// (Kysely's migrator does, at every start) fails that process with "schema does not exist"; with
// one database per run, and no schema dropped before the run ends, parallel test files and
// parallel runs of other checkouts cannot meet each other's drops.
//
// It also builds the service once (scripts/build-server.mjs, a few seconds) into a directory of the
// run's own: tests that start the service or its command-line tools as processes run that bundle,
// as `npm start` does, instead of compiling the sources through tsx at every start.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { userInfo } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

const repositoryRoot = fileURLToPath(new URL('../../', import.meta.url));

/** Builds the service bundle for this run; the returned function removes it. */
function buildService(): () => void {
  if (process.env.TEST_BUILT_SERVICE_DIR !== undefined) return () => undefined;
  // Under node_modules, so that the bundle finds the packages it leaves external.
  const cache = path.join(repositoryRoot, 'node_modules', '.cache');
  mkdirSync(cache, { recursive: true });
  const directory = mkdtempSync(path.join(cache, 'platform-test-build-'));
  execFileSync(process.execPath, ['scripts/build-server.mjs', '--outdir', directory], {
    cwd: repositoryRoot,
    stdio: 'inherit',
  });
  process.env.TEST_BUILT_SERVICE_DIR = directory;
  return () => rmSync(directory, { recursive: true, force: true });
}

const adminUrl =
  process.env.TEST_POSTGRES_URL ?? `postgres://${userInfo().username}@127.0.0.1:5432/test`;

async function run(url: string, statement: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query(statement);
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

export default async function setup(): Promise<() => Promise<void>> {
  const removeBuild = buildService();
  // Each project of the configuration runs this; the first one's database serves them all.
  if (process.env.TEST_POSTGRES_RUN_URL !== undefined) {
    return () => Promise.resolve(removeBuild());
  }
  const name = `platform_test_${randomBytes(6).toString('hex')}`;
  // Without the right to create databases (or without PostgreSQL, which dialects.ts reports),
  // the schemas go into the configured database as before.
  if (!(await run(adminUrl, `create database ${name}`))) {
    return () => Promise.resolve(removeBuild());
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  process.env.TEST_POSTGRES_RUN_URL = url.toString();
  return async () => {
    await run(adminUrl, `drop database if exists ${name} with (force)`);
    removeBuild();
  };
}
