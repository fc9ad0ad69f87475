// The audit log's query and answer shapes (TypeBox): what Fastify validates and the OpenAPI
// document lists. Every string of the query is bounded and patterned.
import Type from 'typebox';
import { LimitSchema, OffsetSchema, Timestamp } from '../../http/schemas/common.js';
import { actionPattern, targetTypePattern } from './audit-record.js';

export const AuditLogQuery = Type.Object({
  limit: LimitSchema(50),
  offset: OffsetSchema(),
  action: Type.Optional(
    Type.String({
      maxLength: 64,
      pattern: actionPattern,
      description: 'Only records of this action, e.g. `api_key.create` (docs/audit.md lists them).',
    }),
  ),
  target_type: Type.Optional(
    Type.String({
      maxLength: 64,
      pattern: targetTypePattern,
      description: 'Only records whose target is of this type, e.g. `budget`.',
    }),
  ),
  from: Type.Optional(
    Type.String({
      format: 'date-time',
      maxLength: 40,
      description: 'Only records at or after this time (ISO 8601).',
    }),
  ),
  to: Type.Optional(
    Type.String({
      format: 'date-time',
      maxLength: 40,
      description: 'Only records before this time (ISO 8601).',
    }),
  ),
  account_id: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 64,
      description:
        "Only this account's records. Admin keys of the platform owner's account see every account's records and may name any; other keys only their own.",
    }),
  ),
});

const Side = Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]);

export const AuditRecordSchema = Type.Object(
  {
    id: Type.String({ description: 'aud_…' }),
    object: Type.Literal('audit_record'),
    account_id: Type.String(),
    seq: Type.Integer({ description: "The record's place in its account's chain, from 1." }),
    at: Timestamp(),
    actor: Type.Object(
      {
        kind: Type.Union(
          ['key', 'session', 'user', 'system', 'anonymous'].map((kind) => Type.Literal(kind)),
          {
            description:
              'Who acted: an API key, a dashboard session (opened with a key), a single-sign-on user, the service itself, or nobody known (a failed login with an unknown key).',
          },
        ),
        key_id: Type.Union([Type.String(), Type.Null()]),
        session: Type.Union([Type.String(), Type.Null()], {
          description: 'The dashboard session (`sess_…`) the request came with.',
        }),
        user: Type.Union([Type.String(), Type.Null()], {
          description: 'The single-sign-on user.',
        }),
      },
      { additionalProperties: false },
    ),
    action: Type.String({ description: '`<target type>.<verb>`, e.g. `budget.update`.' }),
    target: Type.Object(
      { type: Type.String(), id: Type.Union([Type.String(), Type.Null()]) },
      { additionalProperties: false },
    ),
    changes: Type.Union(
      [Type.Object({ before: Side, after: Side }, { additionalProperties: false }), Type.Null()],
      {
        description:
          'The changed fields before and after (`before` null for a creation, `after` null for a deletion). Secrets never appear: a value under a name like `token`, `secret` or `api_key` is `[redacted]`, and keys are shown by their name, scopes and limits only.',
      },
    ),
    ip: Type.Union([Type.String(), Type.Null()], { description: "The client's address." }),
    prev_hash: Type.String({
      description:
        "SHA-256 (hex) of the account's record before this one (of the chain's base for the first).",
    }),
    hash: Type.String({
      description:
        "SHA-256 (hex) of this record's canonical form, `prev_hash` included (docs/audit.md).",
    }),
  },
  { $id: 'AuditRecord', title: 'AuditRecord' },
);

export const AuditLogPageSchema = Type.Object({
  object: Type.Literal('list'),
  records: Type.Array(Type.Ref('AuditRecord')),
  total: Type.Integer({ description: 'Records matching the filters.' }),
  limit: Type.Integer(),
  offset: Type.Integer(),
  has_more: Type.Boolean(),
});
