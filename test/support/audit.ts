// Reading the audit log through GET /v1/audit-log in tests, and running its command-line tool.
import type { App } from '../../src/http/types.js';
import { runCli, type ProcessOutput } from './process.js';
import { bearer } from './test-app.js';

export interface AuditRecordJson {
  id: string;
  object: 'audit_record';
  account_id: string;
  seq: number;
  at: string;
  actor: { kind: string; key_id: string | null; session: string | null; user: string | null };
  action: string;
  target: { type: string; id: string | null };
  changes: { before: Record<string, unknown> | null; after: Record<string, unknown> | null } | null;
  ip: string | null;
  prev_hash: string;
  hash: string;
}

export interface AuditPageJson {
  object: 'list';
  records: AuditRecordJson[];
  total: number;
  limit: number;
  offset: number;
  has_more: boolean;
}

/** One page of the audit log as `key` sees it (`query`: the URL's query string, without `?`). */
export async function auditPage(app: App, key: string, query = ''): Promise<AuditPageJson> {
  const response = await app.inject({
    method: 'GET',
    url: `/v1/audit-log${query === '' ? '' : `?${query}`}`,
    headers: bearer(key),
  });
  if (response.statusCode !== 200) {
    throw new Error(`reading the audit log failed: ${response.statusCode} ${response.body}`);
  }
  return response.json<AuditPageJson>();
}

/** Every record `key` sees, newest first (pages of 100). */
export async function allRecords(app: App, key: string, query = ''): Promise<AuditRecordJson[]> {
  const records: AuditRecordJson[] = [];
  for (let offset = 0; ; offset += 100) {
    const page = await auditPage(
      app,
      key,
      `limit=100&offset=${offset}${query === '' ? '' : `&${query}`}`,
    );
    records.push(...page.records);
    if (!page.has_more) return records;
  }
}

/** The newest record of `action` on `targetId`, as `key` sees it. */
export async function recordOf(
  app: App,
  key: string,
  action: string,
  targetId: string | null,
): Promise<AuditRecordJson | undefined> {
  const records = await allRecords(app, key, `action=${encodeURIComponent(action)}`);
  return records.find((record) => record.target.id === targetId);
}

/**
 * Runs the audit tool (this run's build of it, as `npm run audit --` does; src/cli/audit.ts under
 * tsx without one) against `databaseUrl`.
 */
export function runAuditCli(
  databaseUrl: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<ProcessOutput> {
  return runCli(args, { DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent', ...env }, 'audit');
}
