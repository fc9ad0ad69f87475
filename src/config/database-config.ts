// Where the data lives: SQLite (a file, or `:memory:`) or PostgreSQL.
import { userInfo } from 'node:os';
import path from 'node:path';
import Type, { type Static, type TObject } from 'typebox';
import type { EnvReader } from './config-kit.js';

const DatabaseUrl = () =>
  Type.String({
    pattern: '^(sqlite:.+|postgres(ql)?://.+)$',
    message: "expected 'sqlite:PATH' or 'postgres://…'",
  });

export const databaseFileProperties = {
  database_url: Type.Optional(DatabaseUrl()),
};

type DatabaseFile = Static<TObject<typeof databaseFileProperties>>;

const DatabaseUrlText = DatabaseUrl();

export function readDatabaseEnv(env: EnvReader): DatabaseFile & { pgUser?: string } {
  return {
    database_url: env.text('DATABASE_URL', DatabaseUrlText),
    pgUser: env.raw('PGUSER'),
  };
}

export function databaseConfig(
  fromEnv: ReturnType<typeof readDatabaseEnv>,
  file: DatabaseFile,
  cwd: string,
) {
  const url = fromEnv.database_url ?? file.database_url ?? 'sqlite:./data/platform.db';
  if (url.startsWith('sqlite:')) {
    const location = url.slice('sqlite:'.length);
    return {
      kind: 'sqlite' as const,
      path: location === ':memory:' ? location : path.resolve(cwd, location),
    };
  }
  // Like libpq: without a user in the URL or PGUSER, connect as the operating-system user
  // (node-postgres would otherwise rely on $USER, which services and containers often lack).
  const parsed = new URL(url);
  if (parsed.username === '' && fromEnv.pgUser === undefined) {
    parsed.username = encodeURIComponent(userInfo().username);
    return { kind: 'postgres' as const, url: parsed.toString() };
  }
  return { kind: 'postgres' as const, url };
}
