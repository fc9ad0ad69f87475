// GET /v1/audit-log: an account's audit records, newest first (admin keys; the platform owner's
// admin keys see every account's), as a Fastify plugin over the audit log.
import { access } from '../../auth/scopes.js';
import { AppError, InvalidParameterError } from '../../errors/app-error.js';
import { featurePlugin, type FeaturePlugin } from '../../http/feature-plugin.js';
import { principalOf } from '../../http/types.js';
import type { AuditLog } from './audit-log.js';
import type { AuditRecord } from './audit-record.js';
import { AuditLogPageSchema, AuditLogQuery, AuditRecordSchema } from './audit.schemas.js';

function changesJson(text: string | null) {
  if (text === null) return null;
  return JSON.parse(text) as {
    before: Record<string, unknown> | null;
    after: Record<string, unknown> | null;
  };
}

export function auditRecordJson(record: AuditRecord) {
  return {
    id: record.id,
    object: 'audit_record' as const,
    account_id: record.accountId,
    seq: record.seq,
    at: record.at,
    actor: {
      kind: record.actor.kind,
      key_id: record.actor.keyId,
      session: record.actor.sessionId,
      user: record.actor.user,
    },
    action: record.action,
    target: { type: record.target.type, id: record.target.id },
    changes: changesJson(record.changes),
    ip: record.ip,
    prev_hash: record.prevHash,
    hash: record.hash,
  };
}

/** An ISO time as the records store it (so that text comparison is time comparison). */
function instant(value: string | undefined, param: string): string | undefined {
  if (value === undefined) return undefined;
  const ms = Date.parse(value);
  if (Number.isNaN(ms))
    throw new InvalidParameterError(param, `'${param}' must be an ISO 8601 time.`);
  return new Date(ms).toISOString();
}

export function auditPlugin(audit: AuditLog): FeaturePlugin {
  return featurePlugin('audit', (app) => {
    app.addSchema(AuditRecordSchema);
    app.get(
      '/v1/audit-log',
      {
        config: { access: access.scopes('admin') },
        schema: {
          operationId: 'listAuditLog',
          tags: ['Audit log'],
          summary: 'List audit records',
          description:
            "Every administrative change of the caller's account — keys created and revoked, budgets, routing policies, agents, pipelines and knowledge bases created, changed and deleted, tool calls approved and rejected, dashboard logins, failed logins and logouts — newest first, each with who made it, from where, and the changed fields before and after (never a secret). Records are append-only and hash-chained per account (`prev_hash`, `hash`); `npm run audit -- verify` checks the chains. Admin keys of the platform owner's account see every account's records (`account_id` narrows them to one). Filters: `action`, `target_type`, `from` (inclusive), `to` (exclusive).",
          querystring: AuditLogQuery,
          response: { 200: AuditLogPageSchema },
        },
      },
      async (request) => {
        const principal = principalOf(request);
        const query = request.query;
        const owner = principal.accountKind === 'owner';
        if (!owner && query.account_id !== undefined && query.account_id !== principal.accountId) {
          throw new AppError(
            'insufficient_permissions',
            "Only admin keys of the platform owner's account may read another account's audit records.",
            { param: 'account_id', details: { required_scope: 'admin' } },
          );
        }
        const from = instant(query.from, 'from');
        const to = instant(query.to, 'to');
        if (from !== undefined && to !== undefined && from >= to) {
          throw new InvalidParameterError('from', "'from' must be earlier than 'to'.");
        }
        const { limit, offset } = query;
        const { records, total } = await audit.list(
          {
            accountId: owner ? (query.account_id ?? null) : principal.accountId,
            ...(query.action === undefined ? {} : { action: query.action }),
            ...(query.target_type === undefined ? {} : { targetType: query.target_type }),
            ...(from === undefined ? {} : { from }),
            ...(to === undefined ? {} : { to }),
          },
          { limit, offset },
        );
        return {
          object: 'list' as const,
          records: records.map(auditRecordJson),
          total,
          limit,
          offset,
          has_more: offset + records.length < total,
        };
      },
    );
  });
}
