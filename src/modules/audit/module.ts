// The audit module, wired: the log over its repository, the pruning of records past retention
// (a timer of this instance, when retention is configured), and the HTTP plugin of
// GET /v1/audit-log. What is recorded is decided where requests are answered
// (src/http/audit-trail.ts); other areas may record through `log.record()` (single sign-on does).
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { FeaturePlugin } from '../../http/feature-plugin.js';
import type { DatabaseSchema } from '../../storage/schema.js';
import type { AuditConfig } from './audit.config.js';
import { AuditLog } from './audit-log.js';
import { genesisHash } from './audit-record.js';
import { AuditRepository } from './audit.repository.js';
import { auditPlugin } from './audit.routes.js';
import { verifyChains } from './audit-verify.js';

export type { AuditActor, AuditChanges, AuditEntry, AuditRecord } from './audit-record.js';
export { systemActor } from './audit-record.js';
export type { AuditLog } from './audit-log.js';

export interface AuditModuleDependencies {
  readonly storage: { readonly db: Kysely<DatabaseSchema>; readonly kind: 'sqlite' | 'postgres' };
  readonly config: AuditConfig;
  readonly logger: Logger;
  readonly now: () => number;
}

export interface AuditModule {
  readonly log: AuditLog;
  readonly plugin: FeaturePlugin;
  /** Walks the chains (every account's, or those named), stopping at the first break. */
  verify(accounts?: readonly string[]): ReturnType<typeof verifyChains>;
  /** Starts pruning on this instance every `pruneIntervalMs` (nothing without retention). */
  startPruning(): void;
  close(): Promise<void>;
}

export function createAuditModule(dependencies: AuditModuleDependencies): AuditModule {
  const { storage, config, logger, now } = dependencies;
  const repository = new AuditRepository(storage.db, storage.kind, genesisHash);
  const log = new AuditLog({ repository, now });
  let timer: NodeJS.Timeout | undefined;
  const prune = (retentionDays: number) =>
    log
      .prune(retentionDays)
      .then((deleted) => {
        if (deleted > 0)
          logger.info({ deleted, retentionDays }, 'audit records past retention deleted');
      })
      .catch((error: unknown) => logger.warn({ err: error }, 'pruning the audit log failed'));
  return {
    log,
    plugin: auditPlugin(log),
    verify: (accounts) => verifyChains(repository, genesisHash, accounts),
    startPruning() {
      const days = config.retentionDays;
      if (days === null || timer !== undefined) return;
      void prune(days);
      timer = setInterval(() => void prune(days), config.pruneIntervalMs);
      timer.unref();
    },
    close() {
      clearInterval(timer);
      return Promise.resolve();
    },
  };
}
