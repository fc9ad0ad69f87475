// Agents of an account: create, list, read, change, delete. Public agents of other accounts are
// readable (without their private configuration) and executable, never changeable by them.
import { AppError, NotFoundError } from '../../errors/app-error.js';
import { newId } from '../../ids.js';
import type { ModelRegistry } from '../../models/model-registry.js';
import type { AgentsRepository } from './agents.repository.js';
import type { Agent } from './agent.js';
import type { AgentCatalog } from './agent-catalog.js';
import { sharedConfiguration } from './private-configuration.js';
import { assertSafeKeys } from '../../validation/safe-keys.js';
import { requireSchema } from '../../validation/schema-validator.js';

export interface CreateAgentInput {
  name: string;
  agentType: string;
  configuration: Record<string, unknown>;
  description?: string | undefined;
  modelId?: string | null | undefined;
  isPublic?: boolean | undefined;
  exposeAsTool?: boolean | undefined;
}

export interface UpdateAgentInput {
  name?: string | undefined;
  description?: string | undefined;
  configuration?: Record<string, unknown> | undefined;
  modelId?: string | null | undefined;
  isPublic?: boolean | undefined;
  exposeAsTool?: boolean | undefined;
}

/** The knowledge bases an agent's configuration may name: the account's own. */
export interface KnowledgeBaseLookup {
  /** The ids among `ids` that are not knowledge bases of the account. */
  missing(accountId: string, ids: readonly string[]): Promise<string[]>;
}

/** The pipelines whose stages run an agent (of any account: public agents are shared). */
export interface AgentUsage {
  pipelinesUsing(agentId: string): Promise<Array<{ id: string; accountId: string; name: string }>>;
}

export interface AgentServiceOptions {
  agents: AgentsRepository;
  catalog: AgentCatalog;
  models: ModelRegistry;
  knowledgeBases: KnowledgeBaseLookup;
  usage: AgentUsage;
  now?: () => number;
}

/** An agent as a caller sees it: another account's public agent without its private keys. */
export interface AgentView {
  agent: Agent;
  owned: boolean;
  configuration: Record<string, unknown>;
  /** Configuration keys left out because they are the owner's (empty for one's own agent). */
  hiddenKeys: string[];
}

/** Most pipelines a 409 names one by one. */
const namedPipelines = 20;

export class AgentService {
  private readonly now: () => number;

  constructor(private readonly options: AgentServiceOptions) {
    this.now = options.now ?? Date.now;
  }

  async create(accountId: string, input: CreateAgentInput): Promise<Agent> {
    const type = this.options.catalog.require(input.agentType);
    assertSafeKeys(input.configuration, 'configuration');
    const configuration = requireSchema<Record<string, unknown>>(
      type.configurationSchema,
      input.configuration,
      'agent configuration',
      'configuration',
    );
    this.requireChatModel(input.modelId, 'model_id');
    await this.checkKnowledgeBases(accountId, configuration);
    const stored =
      type.prepareConfiguration === undefined
        ? configuration
        : await type.prepareConfiguration(accountId, configuration, null, {
            isPublic: input.isPublic ?? false,
          });
    const now = new Date(this.now()).toISOString();
    const agent: Agent = {
      id: newId('agent'),
      accountId,
      name: input.name,
      description: input.description ?? '',
      agentType: type.id,
      modelId: input.modelId ?? null,
      isPublic: input.isPublic ?? false,
      exposeAsTool: input.exposeAsTool ?? false,
      configuration: stored,
      createdAt: now,
      updatedAt: now,
    };
    await this.options.agents.insert(agent);
    return agent;
  }

  list(accountId: string, page: { limit: number; offset: number }) {
    return this.options.agents.listVisible(accountId, page);
  }

  /** The account's own agents exposed as tools of POST /mcp, oldest first, at most `limit`. */
  exposedAsTools(accountId: string, limit: number): Promise<Agent[]> {
    return this.options.agents.listExposed(accountId, limit);
  }

  async get(accountId: string, id: string): Promise<Agent> {
    const agent = await this.options.agents.findVisible(accountId, id);
    if (agent === undefined) throw new NotFoundError('Agent', id);
    return agent;
  }

  /** What `accountId` may see of an agent: all of its own, a public one's shared keys only. */
  view(agent: Agent, accountId: string): AgentView {
    if (agent.accountId === accountId) {
      const type = this.options.catalog.require(agent.agentType);
      const configuration = type.showConfiguration?.(agent.configuration) ?? agent.configuration;
      return { agent, owned: true, configuration, hiddenKeys: [] };
    }
    const shared = sharedConfiguration(agent.agentType, agent.configuration);
    return { agent, owned: false, configuration: shared.configuration, hiddenKeys: shared.hidden };
  }

  /** A given `configuration` replaces the stored one whole (validated, defaults filled). */
  async update(accountId: string, id: string, input: UpdateAgentInput): Promise<Agent> {
    const agent = await this.owned(accountId, id);
    assertSafeKeys(input.configuration, 'configuration');
    const type = this.options.catalog.require(agent.agentType);
    const checked =
      input.configuration === undefined
        ? undefined
        : requireSchema<Record<string, unknown>>(
            this.options.catalog.require(agent.agentType).configurationSchema,
            input.configuration,
            'agent configuration',
            'configuration',
          );
    this.requireChatModel(input.modelId, 'model_id');
    if (checked !== undefined) await this.checkKnowledgeBases(accountId, checked);
    const isPublic = input.isPublic ?? agent.isPublic;
    const configuration =
      type.prepareConfiguration === undefined ||
      (checked === undefined && input.isPublic === undefined)
        ? checked
        : await type.prepareConfiguration(
            accountId,
            checked ?? agent.configuration,
            agent.configuration,
            { isPublic },
          );
    const updated = await this.options.agents.update(
      accountId,
      id,
      {
        ...(input.name === undefined ? {} : { name: input.name }),
        ...(input.description === undefined ? {} : { description: input.description }),
        ...(input.modelId === undefined ? {} : { modelId: input.modelId }),
        ...(input.isPublic === undefined ? {} : { isPublic: input.isPublic }),
        ...(input.exposeAsTool === undefined ? {} : { exposeAsTool: input.exposeAsTool }),
        ...(configuration === undefined ? {} : { configuration }),
      },
      new Date(this.now()).toISOString(),
    );
    if (updated === undefined) throw new NotFoundError('Agent', id);
    return updated;
  }

  /**
   * Deletes the agent. While pipelines run it, that is a 409 naming them (the account's own by id
   * and name, other accounts' only counted) unless `force`: then the pipelines keep their stages,
   * and a run fails at that stage with `not_found` until the stage is changed.
   */
  async delete(accountId: string, id: string, options: { force?: boolean } = {}): Promise<void> {
    await this.owned(accountId, id);
    if (options.force !== true) {
      const users = await this.options.usage.pipelinesUsing(id);
      if (users.length > 0) {
        const own = users.filter((pipeline) => pipeline.accountId === accountId);
        const others = users.length - own.length;
        const named = own
          .slice(0, namedPipelines)
          .map((pipeline) => `'${pipeline.name}' (${pipeline.id})`);
        const parts = [
          ...(named.length > 0
            ? [`pipeline${own.length === 1 ? '' : 's'} ${named.join(', ')}`]
            : []),
          ...(own.length > namedPipelines ? [`${own.length - namedPipelines} more of yours`] : []),
          ...(others > 0 ? [`${others} pipeline${others === 1 ? '' : 's'} of other accounts`] : []),
        ];
        throw new AppError(
          'conflict',
          `Agent '${id}' is used by ${parts.join(' and ')}. Change their stages first, or delete with ?force=true: the pipelines are kept, and their runs fail at the stage that used this agent.`,
          {
            details: {
              pipelines: own
                .slice(0, namedPipelines)
                .map((pipeline) => ({ id: pipeline.id, name: pipeline.name })),
              pipeline_count: own.length,
              other_accounts_pipelines: others,
            },
          },
        );
      }
    }
    await this.options.agents.delete(accountId, id);
  }

  /** The agent when the account owns it: 404 when it cannot see it, 403 when it is another's public one. */
  private async owned(accountId: string, id: string): Promise<Agent> {
    const agent = await this.get(accountId, id);
    if (agent.accountId !== accountId) {
      throw new AppError(
        'insufficient_permissions',
        `Agent '${id}' is a public agent of another account: it can be read and executed, not changed.`,
      );
    }
    return agent;
  }

  /**
   * `modelId` names a chat model of the catalog (null or absent: the default model is used);
   * otherwise a 400 naming `param` (`model_id` on an agent, `model` on an execution).
   */
  requireChatModel(modelId: string | null | undefined, param: string): void {
    if (modelId === undefined || modelId === null) return;
    this.options.models.resolve('chat', modelId, param);
  }

  /** Every knowledge base the configuration names is the account's: otherwise 404 naming it. */
  private async checkKnowledgeBases(
    accountId: string,
    configuration: Record<string, unknown>,
  ): Promise<void> {
    const ids = configuration.knowledge_base_ids;
    if (!Array.isArray(ids) || ids.length === 0) return;
    const missing = new Set(await this.options.knowledgeBases.missing(accountId, ids as string[]));
    const index = (ids as string[]).findIndex((id) => missing.has(id));
    if (index === -1) return;
    throw new AppError('not_found', `Knowledge base '${String(ids[index])}' not found.`, {
      param: `configuration.knowledge_base_ids[${index}]`,
    });
  }
}
