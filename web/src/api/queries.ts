// Every read of the dashboard, as TanStack Query options under a key. Keys start with the resource,
// so a write invalidates everything it may have changed with one prefix (`keys.agents`).
import { queryOptions, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { api, unwrap } from './client';

const firstHundred = { limit: 100, offset: 0 } as const;

/** Key prefixes, one per resource, for invalidation after a write. */
export const keys = {
  features: ['features'],
  models: ['models'],
  apiKeys: ['api-keys'],
  accounts: ['accounts'],
  agents: ['agents'],
  pipelines: ['pipelines'],
  executions: ['executions'],
  knowledgeBases: ['knowledge-bases'],
  conversations: ['conversations'],
  templates: ['templates'],
  routingPolicies: ['routing-policies'],
  usage: ['usage'],
} as const;

export const queries = {
  health: () =>
    queryOptions({
      queryKey: ['health'],
      queryFn: async () => unwrap(await api.GET('/v1/health')),
    }),
  features: () =>
    queryOptions({
      queryKey: keys.features,
      queryFn: async () => unwrap(await api.GET('/v1/features')),
    }),
  models: () =>
    queryOptions({
      queryKey: keys.models,
      queryFn: async () => unwrap(await api.GET('/v1/models')),
    }),
  /**
   * `sinceMs`: milliseconds before now, taken when the request is made (or `from`, a fixed start);
   * none: the API's default, the last 7 days. `groupBy` fills the answer's `groups`.
   */
  usage: (
    range: {
      sinceMs?: number;
      from?: string;
      keyId?: string | null;
      groupBy?: ('key' | 'model' | 'user' | 'route' | 'deployment')[];
    } = {},
  ) =>
    queryOptions({
      queryKey: [...keys.usage, range],
      queryFn: async () =>
        unwrap(
          await api.GET('/v1/usage', {
            params: {
              query: {
                ...(range.sinceMs === undefined
                  ? {}
                  : { from: new Date(Date.now() - range.sinceMs).toISOString() }),
                ...(range.from === undefined ? {} : { from: range.from }),
                ...(range.keyId === null || range.keyId === undefined
                  ? {}
                  : { key_id: range.keyId }),
                ...(range.groupBy === undefined ? {} : { group_by: range.groupBy }),
              },
            },
          }),
        ),
    }),
  apiKeys: (page: { limit: number; offset: number }) =>
    queryOptions({
      queryKey: [...keys.apiKeys, page],
      queryFn: async () => unwrap(await api.GET('/v1/api-keys', { params: { query: page } })),
    }),
  /** The configured tiers, and which the signed-in key may give a new key. */
  rateLimitTiers: () =>
    queryOptions({
      queryKey: ['rate-limit-tiers'],
      queryFn: async () => unwrap(await api.GET('/v1/rate-limits/tiers')),
    }),
  accounts: () =>
    queryOptions({
      queryKey: [...keys.accounts, firstHundred],
      queryFn: async () =>
        unwrap(await api.GET('/v1/accounts', { params: { query: firstHundred } })),
    }),
  agentTypes: () =>
    queryOptions({
      queryKey: ['agent-types'],
      queryFn: async () => unwrap(await api.GET('/v1/agent-types')),
    }),
  agents: () =>
    queryOptions({
      queryKey: [...keys.agents, 'list', firstHundred],
      queryFn: async () => unwrap(await api.GET('/v1/agents', { params: { query: firstHundred } })),
    }),
  agent: (agentId: string) =>
    queryOptions({
      queryKey: [...keys.agents, 'detail', agentId],
      queryFn: async () =>
        unwrap(await api.GET('/v1/agents/{agent_id}', { params: { path: { agent_id: agentId } } })),
    }),
  pipelines: () =>
    queryOptions({
      queryKey: [...keys.pipelines, 'list', firstHundred],
      queryFn: async () =>
        unwrap(await api.GET('/v1/pipelines', { params: { query: firstHundred } })),
    }),
  pipeline: (pipelineId: string) =>
    queryOptions({
      queryKey: [...keys.pipelines, 'detail', pipelineId],
      queryFn: async () =>
        unwrap(
          await api.GET('/v1/pipelines/{pipeline_id}', {
            params: { path: { pipeline_id: pipelineId } },
          }),
        ),
    }),
  pipelineExecutions: (pipelineId: string) =>
    queryOptions({
      queryKey: [...keys.pipelines, 'executions', pipelineId],
      queryFn: async () =>
        unwrap(
          await api.GET('/v1/pipelines/{pipeline_id}/executions', {
            params: { path: { pipeline_id: pipelineId }, query: { limit: 20, offset: 0 } },
          }),
        ),
    }),
  execution: (executionId: string) =>
    queryOptions({
      queryKey: [...keys.executions, executionId],
      queryFn: async () =>
        unwrap(
          await api.GET('/v1/executions/{execution_id}', {
            params: { path: { execution_id: executionId } },
          }),
        ),
    }),
  knowledgeBases: () =>
    queryOptions({
      queryKey: [...keys.knowledgeBases, 'list', firstHundred],
      queryFn: async () =>
        unwrap(await api.GET('/v1/knowledge-bases', { params: { query: firstHundred } })),
    }),
  knowledgeDocuments: (knowledgeBaseId: string) =>
    queryOptions({
      queryKey: [...keys.knowledgeBases, 'documents', knowledgeBaseId],
      queryFn: async () =>
        unwrap(
          await api.GET('/v1/knowledge-bases/{kb_id}/documents', {
            params: { path: { kb_id: knowledgeBaseId }, query: firstHundred },
          }),
        ),
    }),
  conversations: (filter: {
    userId: string;
    status: 'active' | 'archived' | 'all';
    order: 'desc' | 'asc';
    limit: number;
    offset: number;
  }) =>
    queryOptions({
      queryKey: [...keys.conversations, 'list', filter],
      queryFn: async () => {
        const { userId, ...rest } = filter;
        return unwrap(
          await api.GET('/v1/conversations', {
            params: {
              query: {
                ...(userId.trim() === '' ? { all_users: true } : { user_id: userId.trim() }),
                ...rest,
              },
            },
          }),
        );
      },
    }),
  conversation: (conversationId: string) =>
    queryOptions({
      queryKey: [...keys.conversations, 'detail', conversationId],
      queryFn: async () =>
        unwrap(
          await api.GET('/v1/conversations/{conversation_id}', {
            params: { path: { conversation_id: conversationId } },
          }),
        ),
    }),
  /** The first hundred messages, oldest first. */
  conversationMessages: (conversationId: string) =>
    queryOptions({
      queryKey: [...keys.conversations, 'messages', conversationId],
      queryFn: async () =>
        unwrap(
          await api.GET('/v1/conversations/{conversation_id}/messages', {
            params: {
              path: { conversation_id: conversationId },
              query: { ...firstHundred, order: 'asc' },
            },
          }),
        ),
    }),
  conversationFeedback: (conversationId: string) =>
    queryOptions({
      queryKey: [...keys.conversations, 'feedback', conversationId],
      queryFn: async () =>
        unwrap(
          await api.GET('/v1/conversations/{conversation_id}/feedback', {
            params: { path: { conversation_id: conversationId } },
          }),
        ),
    }),
  templates: () =>
    queryOptions({
      queryKey: [...keys.templates, 'list'],
      queryFn: async () => unwrap(await api.GET('/v1/templates')),
    }),
  template: (templateName: string) =>
    queryOptions({
      queryKey: [...keys.templates, 'detail', templateName],
      queryFn: async () =>
        unwrap(
          await api.GET('/v1/templates/{template_name}', {
            params: { path: { template_name: templateName } },
          }),
        ),
    }),
  routingPolicies: () =>
    queryOptions({
      queryKey: keys.routingPolicies,
      queryFn: async () => unwrap(await api.GET('/v1/routing/policies')).policies,
    }),
};

/**
 * Whether the service reports a feature enabled: undefined while it is asked, false when it is off
 * or the question failed (the page then says the feature is off, as it cannot offer it).
 */
export function useFeatureEnabled(name: string): boolean | undefined {
  const features = useQuery(queries.features());
  if (features.isError) return false;
  return features.data?.features.some((feature) => feature.name === name && feature.enabled);
}

/** The types of an event of `GET /v1/executions/{id}/events` after which the record has changed. */
const changeEvents = new Set([
  'step',
  'approval-required',
  'stage-start',
  'stage-end',
  'execution-end',
]);

/**
 * Keeps an execution's record (queries.execution) fresh while `active` (it runs or waits for a
 * person): its event stream says when something changed, and the record is read again then, so the
 * page shows each step, each wait and the end as they happen without polling. Several events in a
 * row (the replay of what already happened) cost one read at a time, and one more after it.
 * Answers `restart`: follows anew, for when the stream was lost (after a decision, say).
 */
export function useFollowExecution(executionId: string, active: boolean): () => void {
  const queryClient = useQueryClient();
  const [generation, setGeneration] = useState(0);
  useEffect(() => {
    if (!active || executionId === '') return;
    const { queryKey } = queries.execution(executionId);
    let stopped = false;
    let reading = false;
    let readAgain = false;
    const refresh = async () => {
      if (reading) {
        readAgain = true;
        return;
      }
      reading = true;
      try {
        do {
          readAgain = false;
          await queryClient.invalidateQueries({ queryKey, exact: true });
        } while (readAgain && !stopped);
      } finally {
        reading = false;
      }
    };
    // Session cookie, same origin: a GET needs no CSRF token. The browser reconnects by itself
    // when the connection drops during a long wait; the stream then replays from the start.
    const source = new EventSource(`/v1/executions/${encodeURIComponent(executionId)}/events`, {
      withCredentials: true,
    });
    source.onmessage = (message: MessageEvent<string>) => {
      const event = JSON.parse(message.data) as { type?: string };
      if (event.type === 'execution-end' || event.type === 'error') {
        // The stream ends here: closing it keeps the browser from reconnecting.
        source.close();
      }
      if (event.type !== undefined && changeEvents.has(event.type)) void refresh();
    };
    return () => {
      stopped = true;
      source.close();
    };
  }, [queryClient, executionId, active, generation]);
  return () => setGeneration((current) => current + 1);
}
