// An account's routing policies: created, changed and deleted after checking every condition and
// action the way evaluation will use them (400 naming the field), with route_to resolved from a
// name to the target's id; the router cache forgets the account's policies on every change.
import type { ModelDefinition } from '../../config/config.js';
import {
  AppError,
  ConflictError,
  InvalidParameterError,
  NotFoundError,
} from '../../errors/app-error.js';
import { newId } from '../../ids.js';
import { policyTarget, resolveTarget } from './candidates.js';
import {
  CompiledPolicy,
  compilePattern,
  emptyOutcome,
  modelHasProvider,
  modelRestriction,
  type PolicyActions,
  type PolicyConditions,
  type RoutingPolicy,
} from './policies.js';
import type { RoutingContext } from './routing-context.js';
import { wordsOf } from './text-features.js';
import type { RouteTarget, RouteType } from './types.js';

export interface PolicyInput {
  name?: string | undefined;
  description?: string | undefined;
  priority?: number | undefined;
  enabled?: boolean | undefined;
  conditions?: PolicyConditions | undefined;
  actions?:
    | (Omit<PolicyActions, 'route_to'> & {
        route_to?: { type?: RouteType | undefined; target: string } | undefined;
      })
    | undefined;
}

type ActionsInput = NonNullable<PolicyInput['actions']>;

const maxPolicies = 200;

function checkConditions(conditions: PolicyConditions, tiers: readonly string[]): void {
  conditions.tiers?.forEach((tier, index) => {
    if (!tiers.includes(tier)) {
      throw new InvalidParameterError(
        `conditions.tiers[${index}]`,
        `'${tier}' is not a configured tier (${tiers.join(', ')}).`,
      );
    }
  });
  if (conditions.pattern !== undefined) compilePattern(conditions.pattern, 'conditions.pattern');
  conditions.keywords?.forEach((keyword, index) => {
    if (wordsOf(keyword).length === 0) {
      throw new InvalidParameterError(
        `conditions.keywords[${index}]`,
        'A keyword needs at least one letter or digit.',
      );
    }
  });
}

const unknownProvider = (provider: string) =>
  `No model of the catalog has provider '${provider}' (a model's provider or connection, as GET /v1/models shows them).`;

/** At least one action, and every model and provider named is in the catalog. */
function checkActions(actions: ActionsInput, catalog: readonly ModelDefinition[]): void {
  const hasAction =
    actions.route_to !== undefined ||
    (actions.forbid_models?.length ?? 0) > 0 ||
    (actions.forbid_providers?.length ?? 0) > 0 ||
    actions.require_provider !== undefined ||
    actions.max_tokens !== undefined;
  if (!hasAction) {
    throw new InvalidParameterError(
      'actions',
      'A policy needs at least one action: route_to, forbid_models, forbid_providers, require_provider or max_tokens.',
    );
  }
  actions.forbid_models?.forEach((name, index) => {
    if (!catalog.some((definition) => definition.name === name)) {
      throw new AppError(
        'unknown_model',
        `Model '${name}' is not in the catalog (GET /v1/models).`,
        {
          param: `actions.forbid_models[${index}]`,
        },
      );
    }
  });
  const knownProvider = (provider: string) =>
    catalog.some((definition) => modelHasProvider(definition, provider));
  actions.forbid_providers?.forEach((provider, index) => {
    if (!knownProvider(provider)) {
      throw new InvalidParameterError(
        `actions.forbid_providers[${index}]`,
        unknownProvider(provider),
      );
    }
  });
  if (actions.require_provider !== undefined && !knownProvider(actions.require_provider)) {
    throw new InvalidParameterError(
      'actions.require_provider',
      unknownProvider(actions.require_provider),
    );
  }
}

/** The actions as stored: lists without repeats, route_to added once resolved. */
function resolvedActions(actions: ActionsInput): PolicyActions {
  return {
    ...(actions.forbid_models === undefined
      ? {}
      : { forbid_models: [...new Set(actions.forbid_models)] }),
    ...(actions.forbid_providers === undefined
      ? {}
      : { forbid_providers: [...new Set(actions.forbid_providers)] }),
    ...(actions.require_provider === undefined
      ? {}
      : { require_provider: actions.require_provider }),
    ...(actions.max_tokens === undefined ? {} : { max_tokens: actions.max_tokens }),
  };
}

/** Whether the policy's own actions forbid the model it routes to. */
function forbidsItsOwnModel(
  policy: RoutingPolicy,
  actions: PolicyActions,
  definition: ModelDefinition,
): boolean {
  const restriction = modelRestriction(
    {
      ...emptyOutcome,
      forbiddenModels: new Map((actions.forbid_models ?? []).map((name) => [name, policy])),
      forbiddenProviders: new Map(
        (actions.forbid_providers ?? []).map((name) => [name.toLowerCase(), policy]),
      ),
      requiredProvider:
        actions.require_provider === undefined
          ? null
          : { value: actions.require_provider.toLowerCase(), policy },
    },
    definition,
  );
  return restriction !== null;
}

export class PolicyManager {
  constructor(private readonly context: RoutingContext) {}

  async list(accountId: string): Promise<RoutingPolicy[]> {
    return this.context.dependencies.repository.listPolicies(accountId);
  }

  async get(accountId: string, id: string): Promise<RoutingPolicy> {
    const policy = await this.context.dependencies.repository.findPolicy(accountId, id);
    if (policy === undefined) throw new NotFoundError('Routing policy', id);
    return policy;
  }

  async create(accountId: string, input: PolicyInput & { name: string }): Promise<RoutingPolicy> {
    const { repository, cache } = this.context.dependencies;
    if ((await repository.countPolicies(accountId)) >= maxPolicies) {
      throw new ConflictError(`An account may hold at most ${maxPolicies} routing policies.`);
    }
    const now = new Date(this.context.now()).toISOString();
    const policy = await this.checked(
      accountId,
      {
        id: newId('pol'),
        accountId,
        name: input.name,
        description: input.description ?? '',
        priority: input.priority ?? 100,
        enabled: input.enabled ?? true,
        conditions: input.conditions ?? {},
        actions: {},
        createdAt: now,
        updatedAt: now,
      },
      input.actions ?? {},
    );
    await repository.savePolicy(policy, true);
    cache.forgetPolicies(accountId);
    return policy;
  }

  async update(accountId: string, id: string, input: PolicyInput): Promise<RoutingPolicy> {
    const existing = await this.get(accountId, id);
    const policy = await this.checked(
      accountId,
      {
        ...existing,
        ...(input.name === undefined ? {} : { name: input.name }),
        ...(input.description === undefined ? {} : { description: input.description }),
        ...(input.priority === undefined ? {} : { priority: input.priority }),
        ...(input.enabled === undefined ? {} : { enabled: input.enabled }),
        ...(input.conditions === undefined ? {} : { conditions: input.conditions }),
        updatedAt: new Date(this.context.now()).toISOString(),
      },
      input.actions ?? existing.actions,
    );
    await this.context.dependencies.repository.savePolicy(policy, false);
    this.context.dependencies.cache.forgetPolicies(accountId);
    return policy;
  }

  async delete(accountId: string, id: string): Promise<void> {
    const { repository, cache } = this.context.dependencies;
    const deleted = await repository.deletePolicy(
      accountId,
      id,
      new Date(this.context.now()).toISOString(),
    );
    cache.forgetPolicies(accountId);
    if (!deleted) throw new NotFoundError('Routing policy', id);
  }

  /** The current name of a policy's route_to target (null when it no longer exists). */
  async routeTargetName(accountId: string, policy: RoutingPolicy): Promise<string | null> {
    if (policy.actions.route_to === undefined) return null;
    const { candidates } = await this.context.account(accountId);
    return (
      policyTarget(policy.actions.route_to, candidates, this.context.chatModels())?.name ?? null
    );
  }

  /** Validates conditions and actions (400 naming the field) and resolves route_to's target. */
  private async checked(
    accountId: string,
    policy: RoutingPolicy,
    actions: ActionsInput,
  ): Promise<RoutingPolicy> {
    checkConditions(policy.conditions, Object.keys(this.context.config.rateLimits.tiers));
    const catalog = this.context.dependencies.models.list().map((status) => status.definition);
    checkActions(actions, catalog);
    const resolved = resolvedActions(actions);
    if (actions.route_to !== undefined) {
      const target = await this.routeTarget(accountId, actions.route_to);
      if (target.type === 'model') {
        const definition = catalog.find((model) => model.name === target.ref)!;
        if (forbidsItsOwnModel(policy, resolved, definition)) {
          throw new InvalidParameterError(
            'actions.route_to.target',
            `The policy routes to model '${target.ref}' and forbids it at the same time.`,
          );
        }
      }
      resolved.route_to = { type: target.type, target: target.ref };
    }
    const checked = { ...policy, actions: resolved };
    // Compiling checks the whole policy the way evaluation will use it.
    new CompiledPolicy(checked);
    return checked;
  }

  private async routeTarget(
    accountId: string,
    routeTo: NonNullable<ActionsInput['route_to']>,
  ): Promise<RouteTarget> {
    const { candidates } = await this.context.account(accountId);
    return resolveTarget(
      routeTo.target,
      routeTo.type ?? null,
      candidates,
      this.context.chatModels(),
      'actions.route_to.target',
    );
  }
}
