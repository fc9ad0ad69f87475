// PostgreSQL through node-postgres, with result types normalised to what the SQLite dialect returns.
import { Kysely } from 'kysely';
import pg from 'pg';
import type { DatabaseSchema } from '../schema.js';
import type { DialectAdapter } from './dialect.js';
import { CurrentSchemaPostgresDialect } from './postgres-introspector.js';

const oids = { int8: 20, timestamptz: 1184, json: 114, jsonb: 3802 } as const;

/** Per-pool type parsers (not pg's global ones): ISO timestamps, numeric counts, JSON left as text. */
function getTypeParser(oid: number, format?: 'text' | 'binary'): (value: string) => unknown {
  switch (oid) {
    case oids.int8:
      return (value) => Number(value);
    case oids.timestamptz:
      return (value) => new Date(value).toISOString();
    case oids.json:
    case oids.jsonb:
      return (value) => value;
    default:
      return pg.types.getTypeParser(oid, format ?? 'text') as (value: string) => unknown;
  }
}

/** How to connect to `url`: shared by the pool and by the connection that listens for notifications. */
export function postgresConnection(url: string): pg.ClientConfig {
  return { connectionString: url };
}

export function createPostgresAdapter(url: string): DialectAdapter {
  const parsed = new URL(url);
  const pool = new pg.Pool({
    ...postgresConnection(url),
    max: 10,
    connectionTimeoutMillis: 5000,
    idleTimeoutMillis: 30_000,
    types: { getTypeParser },
  });
  // An idle client that loses its server emits here; without a listener the process would crash.
  pool.on('error', () => undefined);
  const db = new Kysely<DatabaseSchema>({ dialect: new CurrentSchemaPostgresDialect({ pool }) });
  return {
    kind: 'postgres',
    columnTypes: {
      timestamp: 'timestamptz',
      json: 'jsonb',
      boolean: 'boolean',
      real: 'double precision',
    },
    db,
    description: `postgres://${parsed.host}${parsed.pathname}`,
    isUniqueViolation(error) {
      return (error as { code?: unknown } | null)?.code === '23505';
    },
  };
}
