// GET /v1/usage: the account's requests, tokens and latency over time, per key and per model.
import Type from 'typebox';
import { access } from '../../auth/scopes.js';
import type { Services } from '../../services.js';
import type { UsageFigures, UsagePoint } from '../../usage/usage-service.js';
import type { ActivityRow } from '../../storage/repositories/usage.repository.js';
import { commonParameters, ModelNameSchema, ObjectIdSchema, Timestamp } from '../schemas/common.js';
import { principalOf, type App } from '../types.js';

const figureProperties = {
  requests: Type.Integer({
    description: 'Answered chat turns (stored ones) plus agent and pipeline executions.',
  }),
  failed: Type.Integer({
    description: 'Executions that failed (failed chat turns are not stored).',
  }),
  prompt_tokens: Type.Integer(),
  completion_tokens: Type.Integer(),
  total_tokens: Type.Integer({
    description: 'Prompt plus completion tokens of turns, plus the tokens executions used.',
  }),
  average_latency_ms: Type.Union([Type.Number(), Type.Null()], {
    description: 'Mean time to answer a turn or finish an execution; null without data.',
  }),
  max_latency_ms: Type.Union([Type.Integer(), Type.Null()]),
};

const FiguresSchema = Type.Object(figureProperties, { title: 'UsageFigures' });
const PointSchema = Type.Object(
  { start: Timestamp('Start of the bucket (UTC).'), ...figureProperties },
  { title: 'UsagePoint' },
);

const SourceSchema = Type.Union([
  Type.Literal('chat'),
  Type.Literal('agent'),
  Type.Literal('pipeline'),
]);

const UsageQuerySchema = Type.Object({
  from: Type.Optional(
    Type.String({
      format: 'date-time',
      description: 'Start of the range (inclusive). Default: 7 days before `to`.',
    }),
  ),
  to: Type.Optional(
    Type.String({
      format: 'date-time',
      description: 'End of the range (exclusive). Default: now.',
    }),
  ),
  bucket: Type.Optional(
    Type.Union([Type.Literal('hour'), Type.Literal('day')], {
      description:
        'Size of a time bucket (UTC). Default: `hour` for ranges up to 2 days, else `day`. Hourly buckets cover at most 31 days, daily ones 366.',
    }),
  ),
  key_id: Type.Optional(ObjectIdSchema('Only the usage of this key of the account.')),
  ...commonParameters(),
  model: Type.Optional(
    ModelNameSchema(
      'Only the usage of this model (turns answered by it, runs of agents using it).',
    ),
  ),
});

function figuresJson(figures: UsageFigures) {
  return {
    requests: figures.requests,
    failed: figures.failed,
    prompt_tokens: figures.promptTokens,
    completion_tokens: figures.completionTokens,
    total_tokens: figures.totalTokens,
    average_latency_ms: figures.averageLatencyMs,
    max_latency_ms: figures.maxLatencyMs,
  };
}

const pointJson = (point: UsagePoint) => ({ start: point.start, ...figuresJson(point) });

function activityJson(row: ActivityRow) {
  return {
    source: row.source,
    id: row.id,
    key_id: row.keyId,
    model: row.model,
    conversation_id: row.conversationId,
    agent_id: row.agentId,
    pipeline_id: row.pipelineId,
    status: row.status,
    total_tokens: row.totalTokens,
    latency_ms: row.latencyMs,
    created_at: row.createdAt,
  };
}

export function usageRoutes(app: App, services: Services): void {
  app.get(
    '/v1/usage',
    {
      config: { access: access.scopes('admin') },
      schema: {
        operationId: 'getUsage',
        tags: ['Usage'],
        summary: 'Usage over time, per key and per model',
        description:
          "Requests, tokens and latency of the caller's account in time buckets, in total and grouped by key, by model and by source, read from the stored chat turns (`/v1/chat`, turns over `/v1/ws` and voice streams — under the key that opened the socket or created the voice session — and `/chat/completions` with `user_id` or `conversation_id`; stateless completions are not stored) and agent and pipeline executions. Query parameters: `from`, `to` (ISO 8601; default the last 7 days), `bucket` (`hour` or `day`), `key_id`, `model` (filters). Points are listed only for non-empty buckets; `buckets` lists every bucket of the range. `recent_activity` holds the latest 20 turns and runs.",
        querystring: UsageQuerySchema,
        response: {
          200: Type.Object({
            object: Type.Literal('usage'),
            from: Timestamp(),
            to: Timestamp(),
            bucket: Type.Union([Type.Literal('hour'), Type.Literal('day')]),
            buckets: Type.Array(Timestamp()),
            totals: FiguresSchema,
            points: Type.Array(PointSchema),
            by_key: Type.Array(
              Type.Object({
                key_id: Type.Union([Type.String(), Type.Null()], {
                  description: 'null: turns and runs stored before usage was attributed to keys.',
                }),
                name: Type.Union([Type.String(), Type.Null()]),
                display_key: Type.Union([Type.String(), Type.Null()]),
                totals: FiguresSchema,
                points: Type.Array(PointSchema),
              }),
            ),
            by_model: Type.Array(
              Type.Object({
                model: Type.Union([Type.String(), Type.Null()], {
                  description:
                    'null: executions of agents without a model of their own, and pipeline runs.',
                }),
                totals: FiguresSchema,
                points: Type.Array(PointSchema),
              }),
            ),
            by_source: Type.Array(
              Type.Object({
                source: SourceSchema,
                totals: FiguresSchema,
                points: Type.Array(PointSchema),
              }),
            ),
            recent_activity: Type.Array(
              Type.Object({
                source: SourceSchema,
                id: Type.String({ description: 'msg_… (the answer) or exec_…' }),
                key_id: Type.Union([Type.String(), Type.Null()]),
                model: Type.Union([Type.String(), Type.Null()]),
                conversation_id: Type.Union([Type.String(), Type.Null()]),
                agent_id: Type.Union([Type.String(), Type.Null()]),
                pipeline_id: Type.Union([Type.String(), Type.Null()]),
                status: Type.String({ description: 'finish_reason of a turn, status of a run.' }),
                total_tokens: Type.Integer(),
                latency_ms: Type.Union([Type.Integer(), Type.Null()]),
                created_at: Timestamp(),
              }),
            ),
          }),
        },
      },
    },
    async (request) => {
      const { accountId } = principalOf(request);
      const query = request.query;
      const [report, recent] = await Promise.all([
        services.usage.report(accountId, {
          from: query.from,
          to: query.to,
          bucket: query.bucket,
          keyId: query.key_id,
          model: query.model,
        }),
        services.usage.recentActivity(accountId, 20),
      ]);
      return {
        object: 'usage' as const,
        from: report.from,
        to: report.to,
        bucket: report.bucket,
        buckets: report.buckets,
        totals: figuresJson(report.totals),
        points: report.points.map(pointJson),
        by_key: report.byKey.map((group) => ({
          key_id: group.name,
          name: group.key?.name ?? null,
          display_key: group.key?.displayKey ?? null,
          totals: figuresJson(group.totals),
          points: group.points.map(pointJson),
        })),
        by_model: report.byModel.map((group) => ({
          model: group.name,
          totals: figuresJson(group.totals),
          points: group.points.map(pointJson),
        })),
        by_source: report.bySource.map((group) => ({
          source: group.name,
          totals: figuresJson(group.totals),
          points: group.points.map(pointJson),
        })),
        recent_activity: recent.map(activityJson),
      };
    },
  );
}
