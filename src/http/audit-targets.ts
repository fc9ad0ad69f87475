// The audited fields of each kind of target, read through the services the routes use: what a
// record shows before and after a change. Keys are shown by name, scopes, tier, address ranges,
// expiry and revocation — never the key or its hash; agents by their configuration as their
// owner's admin reads it (sealed tool tokens are not in it), with secret-bearing names redacted
// again when the record is made (modules/audit/audit-changes.ts).
import type { ApiKeyRecord } from '../modules/accounts/api-key.js';
import type { ApiKeyService } from '../modules/accounts/api-key-service.js';
import type { AgentService } from '../modules/agents/agent-service.js';
import type { BudgetService } from '../modules/budgets/budget-service.js';
import type { KnowledgeService } from '../modules/knowledge/knowledge-service.js';
import type { PipelineService } from '../modules/pipelines/pipeline-service.js';
import type { RoutingService } from '../modules/routing/routing-service.js';

export type Fields = Record<string, unknown>;

/** The services the audit trail reads targets through (the routes' own). */
export interface AuditTargetServices {
  readonly apiKeys: Pick<ApiKeyService, 'get'>;
  readonly budgets: Pick<BudgetService, 'get'>;
  readonly routing: Pick<RoutingService, 'getPolicy'>;
  readonly agents: Pick<AgentService, 'get' | 'view'>;
  readonly pipelines: Pick<PipelineService, 'get'>;
  readonly knowledge: Pick<KnowledgeService, 'getKnowledgeBase'>;
}

/** Reads a target's audited fields in an account; null when it is not there (or not readable). */
export type TargetLoader = (
  services: AuditTargetServices,
  accountId: string,
  id: string,
) => Promise<Fields | null>;

/** A key's audited fields: never the key or its hash. */
export function keyFields(key: ApiKeyRecord): Fields {
  return {
    name: key.name,
    scopes: [...key.scopes],
    tier: key.tier,
    allowed_ips: [...key.allowedIps],
    expires_at: key.expiresAt,
    revoked_at: key.revokedAt,
  };
}

const usd = (micros: number | null) => (micros === null ? null : micros / 1_000_000);

/** Whatever goes wrong reading a target leaves the record without its fields, not unwritten. */
function loader(read: TargetLoader): TargetLoader {
  return (services, accountId, id) => read(services, accountId, id).catch(() => null);
}

export const loaders = {
  api_key: loader(async (services, accountId, id) =>
    keyFields(await services.apiKeys.get(accountId, id)),
  ),
  budget: loader(async (services, accountId, id) => {
    const { budget } = await services.budgets.get(accountId, id);
    return {
      scope: budget.scope,
      key_id: budget.keyId,
      user_id: budget.userId,
      period: budget.period,
      limit_usd: usd(budget.limitMicros),
      soft_limit_usd: usd(budget.softLimitMicros),
    };
  }),
  routing_policy: loader(async (services, accountId, id) => {
    const policy = await services.routing.getPolicy(accountId, id);
    return {
      name: policy.name,
      description: policy.description,
      priority: policy.priority,
      enabled: policy.enabled,
      conditions: policy.conditions,
      actions: policy.actions,
    };
  }),
  agent: loader(async (services, accountId, id) => {
    const agent = await services.agents.get(accountId, id);
    // Only the account's own agent is changed by its keys; another's public agent is not audited here.
    if (agent.accountId !== accountId) return null;
    return {
      name: agent.name,
      description: agent.description,
      agent_type: agent.agentType,
      model_id: agent.modelId,
      is_public: agent.isPublic,
      expose_as_tool: agent.exposeAsTool,
      configuration: services.agents.view(agent, accountId).configuration,
    };
  }),
  pipeline: loader(async (services, accountId, id) => {
    const pipeline = await services.pipelines.get(accountId, id);
    return {
      name: pipeline.name,
      description: pipeline.description,
      expose_as_tool: pipeline.exposeAsTool,
      input_schema: pipeline.inputSchema,
      stages: pipeline.stages,
    };
  }),
  knowledge_base: loader(async (services, accountId, id) => {
    const knowledgeBase = await services.knowledge.getKnowledgeBase(accountId, id);
    return {
      name: knowledgeBase.name,
      description: knowledgeBase.description,
      embedding_model: knowledgeBase.embeddingModel,
    };
  }),
} satisfies Record<string, TargetLoader>;
