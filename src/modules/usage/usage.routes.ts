// GET /v1/usage: the account's model calls over time — calls, tokens, model time and cost — in
// total, per key, per model, per source and grouped by `group_by`, with the latest calls and runs;
// and GET /v1/usage/export (usage-export.routes.ts), as a Fastify plugin over the usage service.
import { access } from '../../auth/scopes.js';
import { InvalidParameterError } from '../../errors/app-error.js';
import { principalOf } from '../../http/types.js';
import {
  groupDimensions,
  type GroupDimension,
  type UsageFigures,
  type UsageGrouping,
  type UsagePoint,
  type UsageService,
} from './usage-service.js';
import type { ActivityRow } from './usage-activity.repository.js';
import { usdOf } from './usage-figures.js';
import { UsageQuerySchema, UsageResponseSchema } from './usage.schemas.js';
import { featurePlugin, type FeaturePlugin } from '../../http/feature-plugin.js';
import { registerUsageExport } from './usage-export.routes.js';

export type UsagePlugin = FeaturePlugin;

function figuresJson(figures: UsageFigures) {
  return {
    requests: figures.requests,
    failed: figures.failed,
    prompt_tokens: figures.promptTokens,
    completion_tokens: figures.completionTokens,
    total_tokens: figures.totalTokens,
    cached_input_tokens: figures.cachedInputTokens,
    average_latency_ms: figures.averageLatencyMs,
    max_latency_ms: figures.maxLatencyMs,
    cost_usd: figures.costUsd,
    unpriced_requests: figures.unpricedRequests,
  };
}

const pointJson = (point: UsagePoint) => ({ start: point.start, ...figuresJson(point) });

function activityJson(row: ActivityRow) {
  return {
    source: row.source,
    id: row.id,
    key_id: row.keyId,
    model: row.model,
    models: row.models,
    route: row.route,
    end_user: row.endUser,
    conversation_id: row.conversationId,
    agent_id: row.agentId,
    agent_name: row.agentName,
    pipeline_id: row.pipelineId,
    pipeline_name: row.pipelineName,
    status: row.status,
    calls: row.calls,
    total_tokens: row.totalTokens,
    latency_ms: row.latencyMs,
    cost_usd: row.costMicros === null ? null : usdOf(row.costMicros),
    created_at: row.createdAt,
  };
}

function groupJson(group: UsageGrouping, dimensions: readonly GroupDimension[]) {
  const json: Record<string, unknown> = {};
  for (const dimension of dimensions) {
    const value = group.values[dimension] ?? null;
    if (dimension === 'key') {
      json.key_id = value;
      json.key_name = group.key?.name ?? null;
      json.display_key = group.key?.displayKey ?? null;
    } else {
      json[dimension] = value;
    }
  }
  return { ...json, totals: figuresJson(group.totals), points: group.points.map(pointJson) };
}

/** `group_by` as given (comma-separated, repeated, or both), checked against what it may name. */
export function groupByOf(values: readonly string[] | undefined): GroupDimension[] {
  const names = (values ?? []).flatMap((value) => value.split(',')).map((name) => name.trim());
  for (const name of names) {
    if (!(groupDimensions as readonly string[]).includes(name)) {
      throw new InvalidParameterError(
        'group_by',
        `'group_by' takes any of ${groupDimensions.join(', ')} (comma-separated or repeated); '${name.slice(0, 40)}' is none of them.`,
      );
    }
  }
  return names as GroupDimension[];
}

/** The route of usage, registered by app.ts like any Fastify plugin. */
export function usagePlugin(usage: UsageService): UsagePlugin {
  return featurePlugin('usage', (app) => {
    app.get(
      '/v1/usage',
      {
        config: { access: access.scopes('usage:read') },
        schema: {
          operationId: 'getUsage',
          tags: ['Usage'],
          summary: 'Usage and spend over time, per key, model, end user, route or deployment',
          description:
            "Model calls of the caller's account read from the usage ledger — one record per call on every route, stateless ones included, and one per model turn of agents and pipelines — with their tokens, model time and cost in US dollars, in time buckets: in total, by key, by model, by source, and grouped by `group_by`. Query parameters: `from`, `to` (ISO 8601; default the last 7 days), `bucket` (`hour` or `day`), `key_id`, `model`, `user_id` (filters, which `recent_activity` obeys too), `group_by`. Points are listed only for non-empty buckets; `buckets` lists every bucket of the range. `recent_activity` holds the latest 20 calls and runs (a run once, named, with its models and the sums of its calls).",
          querystring: UsageQuerySchema,
          response: { 200: UsageResponseSchema },
        },
      },
      async (request) => {
        const { accountId } = principalOf(request);
        const { query } = request;
        const groupBy = groupByOf(query.group_by);
        const parameters = {
          from: query.from,
          to: query.to,
          bucket: query.bucket,
          keyId: query.key_id,
          model: query.model,
          endUser: query.user_id,
          groupBy,
        };
        const report = await usage.report(accountId, parameters);
        const recent = await usage.recentActivity(accountId, parameters, 20);
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
          group_by: report.groupBy,
          groups: report.groups.map((group) => groupJson(group, report.groupBy)),
          groups_truncated: report.groupsTruncated,
          recent_activity: recent.map(activityJson),
        };
      },
    );
    registerUsageExport(app, usage);
  });
}
