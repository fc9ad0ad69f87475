// The one ordered list of migrations, shared by both dialects (column types come from the dialect).
import type { Migration, MigrationProvider } from 'kysely';
import type { ColumnTypes } from '../dialects/dialect.js';
import { accountsAndApiKeys } from './001-accounts-and-api-keys.js';

export function migrationProvider(types: ColumnTypes): MigrationProvider {
  const migrations: Record<string, Migration> = {
    '001-accounts-and-api-keys': accountsAndApiKeys(types),
  };
  return { getMigrations: () => Promise.resolve(migrations) };
}
