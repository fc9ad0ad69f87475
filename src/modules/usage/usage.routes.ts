// GET /v1/usage: the account's requests, tokens and latency over time, per key and per model, as
// a Fastify plugin over the usage service.
import { access } from '../../auth/scopes.js';
import { principalOf } from '../../http/types.js';
import type { UsageFigures, UsagePoint, UsageService } from './usage-service.js';
import type { ActivityRow } from './usage.repository.js';
import { UsageQuerySchema, UsageResponseSchema } from './usage.schemas.js';
import { featurePlugin, type FeaturePlugin } from '../../http/feature-plugin.js';

export type UsagePlugin = FeaturePlugin;

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

/** The route of usage, registered by app.ts like any Fastify plugin. */
export function usagePlugin(usage: UsageService): UsagePlugin {
  return featurePlugin('usage', (app) => {
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
          response: { 200: UsageResponseSchema },
        },
      },
      async (request) => {
        const { accountId } = principalOf(request);
        const query = request.query;
        const [report, recent] = await Promise.all([
          usage.report(accountId, {
            from: query.from,
            to: query.to,
            bucket: query.bucket,
            keyId: query.key_id,
            model: query.model,
          }),
          usage.recentActivity(accountId, 20),
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
  });
}
