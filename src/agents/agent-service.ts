// Agents of an account: create, list, read, change, delete. Public agents of other accounts are
// readable (and executable), never changeable by them.
import { AppError, InvalidParameterError, NotFoundError } from '../errors/app-error.js';
import { newId } from '../ids.js';
import type { ModelRegistry } from '../models/model-registry.js';
import type { Agent, AgentsRepository } from '../storage/repositories/agents.repository.js';
import type { AgentCatalog } from './agent-catalog.js';
import { requireSchema } from './schema-validator.js';

export interface CreateAgentInput {
  name: string;
  agentType: string;
  configuration: Record<string, unknown>;
  description?: string | undefined;
  modelId?: string | null | undefined;
  isPublic?: boolean | undefined;
}

export interface UpdateAgentInput {
  name?: string | undefined;
  description?: string | undefined;
  configuration?: Record<string, unknown> | undefined;
  modelId?: string | null | undefined;
  isPublic?: boolean | undefined;
}

export interface AgentServiceOptions {
  agents: AgentsRepository;
  catalog: AgentCatalog;
  models: ModelRegistry;
  now?: () => number;
}

export class AgentService {
  private readonly now: () => number;

  constructor(private readonly options: AgentServiceOptions) {
    this.now = options.now ?? Date.now;
  }

  async create(accountId: string, input: CreateAgentInput): Promise<Agent> {
    const type = this.options.catalog.require(input.agentType);
    const configuration = requireSchema<Record<string, unknown>>(
      type.configurationSchema,
      input.configuration,
      'agent configuration',
      'configuration',
    );
    this.checkModel(input.modelId);
    const now = new Date(this.now()).toISOString();
    const agent: Agent = {
      id: newId('agent'),
      accountId,
      name: input.name,
      description: input.description ?? '',
      agentType: type.id,
      modelId: input.modelId ?? null,
      isPublic: input.isPublic ?? false,
      configuration,
      createdAt: now,
      updatedAt: now,
    };
    await this.options.agents.insert(agent);
    return agent;
  }

  list(accountId: string, page: { limit: number; offset: number }) {
    return this.options.agents.listVisible(accountId, page);
  }

  async get(accountId: string, id: string): Promise<Agent> {
    const agent = await this.options.agents.findVisible(accountId, id);
    if (agent === undefined) throw new NotFoundError('Agent', id);
    return agent;
  }

  /** A given `configuration` replaces the stored one whole (validated, defaults filled). */
  async update(accountId: string, id: string, input: UpdateAgentInput): Promise<Agent> {
    const agent = await this.owned(accountId, id);
    const configuration =
      input.configuration === undefined
        ? undefined
        : requireSchema<Record<string, unknown>>(
            this.options.catalog.require(agent.agentType).configurationSchema,
            input.configuration,
            'agent configuration',
            'configuration',
          );
    this.checkModel(input.modelId);
    const updated = await this.options.agents.update(
      accountId,
      id,
      {
        ...(input.name === undefined ? {} : { name: input.name }),
        ...(input.description === undefined ? {} : { description: input.description }),
        ...(input.modelId === undefined ? {} : { modelId: input.modelId }),
        ...(input.isPublic === undefined ? {} : { isPublic: input.isPublic }),
        ...(configuration === undefined ? {} : { configuration }),
      },
      new Date(this.now()).toISOString(),
    );
    if (updated === undefined) throw new NotFoundError('Agent', id);
    return updated;
  }

  async delete(accountId: string, id: string): Promise<void> {
    await this.owned(accountId, id);
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

  /** `model_id` names a chat model of the catalog (null clears it: the default model is used). */
  private checkModel(modelId: string | null | undefined): void {
    if (modelId === undefined || modelId === null) return;
    const definition = this.options.models.find(modelId);
    if (definition === undefined) {
      throw new AppError(
        'unknown_model',
        `Model '${modelId}' is not in the catalog. GET /v1/models lists the models.`,
        { param: 'model_id' },
      );
    }
    if (definition.type !== 'chat') {
      throw new InvalidParameterError(
        'model_id',
        `Model '${modelId}' is an embedding model, not a chat model.`,
      );
    }
  }
}
