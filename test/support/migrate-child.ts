// Run in a child process by the storage suite: opens the database given as argv[2], migrates it,
// and prints the migrations this process applied as JSON.
import { createDialectAdapter, migrateToLatest } from '../../src/storage/database.js';

const url = process.argv[2] ?? '';
const adapter = await createDialectAdapter(
  url.startsWith('sqlite:') ? { kind: 'sqlite', path: url.slice(7) } : { kind: 'postgres', url },
);
try {
  process.stdout.write(JSON.stringify(await migrateToLatest(adapter)));
} finally {
  await adapter.db.destroy();
}
