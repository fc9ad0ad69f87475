// Where an account's messages can go: its agents and pipelines (with the capabilities of their
// agent types) and the catalog's chat models, and how a target is found, named and checked against
// the policies that apply to a message.
import type { Agent } from '../agents/agent.js';
import type { AgentService } from '../agents/agent-service.js';
import type { ModelDefinition } from '../../config/config.js';
import { InvalidParameterError } from '../../errors/app-error.js';
import type { ModelRegistry } from '../../models/model-registry.js';
import type { Pipeline } from '../pipelines/pipeline.js';
import type { PipelineService } from '../pipelines/pipeline-service.js';
import { modelRestriction, type PolicyOutcome } from './policies.js';
import { wordsOf } from './text-features.js';
import { taxonomy, type IntentCategory } from './taxonomy.js';
import { routeKey, type RouteTarget, type RouteType } from './types.js';

/** The agent types and what each can do, as the agent catalog lists them. */
export interface AgentTypeList {
  list(): readonly { readonly id: string; readonly capabilities: readonly string[] }[];
}

/** What routing reads of the agents and pipelines areas. */
export interface CandidateSources {
  readonly agents: Pick<AgentService, 'list'>;
  readonly agentCatalog: AgentTypeList;
  readonly pipelines: Pick<PipelineService, 'list'>;
}

export interface AgentCandidate {
  readonly target: RouteTarget;
  readonly agentType: string;
  readonly capabilities: readonly string[];
  readonly words: ReadonlySet<string>;
  readonly model: string | null;
}

export interface PipelineCandidate {
  readonly target: RouteTarget;
  readonly capabilities: readonly string[];
  readonly words: ReadonlySet<string>;
  /** The models of its stages' agents that are the account's (null: the default model). */
  readonly models: readonly (string | null)[];
}

export interface Candidates {
  readonly agents: AgentCandidate[];
  readonly pipelines: PipelineCandidate[];
}

/** Agents and pipelines considered as candidates, each. */
const maxCandidates = 1000;
const pageSize = 100;

async function accountAgents(sources: CandidateSources, accountId: string): Promise<Agent[]> {
  const agents: Agent[] = [];
  for (let offset = 0; agents.length < maxCandidates; offset += pageSize) {
    const page = await sources.agents.list(accountId, { limit: pageSize, offset });
    agents.push(...page.agents.filter((agent) => agent.accountId === accountId));
    if (offset + pageSize >= page.total) break;
  }
  return agents;
}

async function accountPipelines(sources: CandidateSources, accountId: string): Promise<Pipeline[]> {
  const pipelines: Pipeline[] = [];
  for (let offset = 0; pipelines.length < maxCandidates; offset += pageSize) {
    const page = await sources.pipelines.list(accountId, { limit: pageSize, offset });
    pipelines.push(...page.pipelines);
    if (offset + pageSize >= page.total) break;
  }
  return pipelines;
}

const oldestFirst = (
  a: { createdAt: string; id: string },
  b: { createdAt: string; id: string },
): number => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id);

const wordSet = (name: string, description: string) => new Set(wordsOf(`${name} ${description}`));

/** The account's own agents and its pipelines, oldest first, with what each can do. */
export async function loadCandidates(
  sources: CandidateSources,
  accountId: string,
): Promise<Candidates> {
  const capabilitiesOf = new Map(
    sources.agentCatalog.list().map((type) => [type.id, type.capabilities]),
  );
  const agents = await accountAgents(sources, accountId);
  const pipelines = await accountPipelines(sources, accountId);
  const byId = new Map(agents.map((agent) => [agent.id, agent]));
  return {
    agents: agents.sort(oldestFirst).map((agent) => ({
      target: { type: 'agent' as const, ref: agent.id, name: agent.name },
      agentType: agent.agentType,
      capabilities: capabilitiesOf.get(agent.agentType) ?? [],
      words: wordSet(agent.name, agent.description),
      model: agent.modelId,
    })),
    pipelines: pipelines.sort(oldestFirst).map((pipeline) => {
      const stageAgents = pipeline.stages
        .map((stage) => byId.get(stage.agent_id))
        .filter((agent): agent is Agent => agent !== undefined);
      return {
        target: { type: 'pipeline' as const, ref: pipeline.id, name: pipeline.name },
        capabilities: [
          ...new Set(stageAgents.flatMap((agent) => capabilitiesOf.get(agent.agentType) ?? [])),
        ],
        words: wordSet(pipeline.name, pipeline.description),
        models: stageAgents.map((agent) => agent.modelId),
      };
    }),
  };
}

export function modelTarget(definition: ModelDefinition): RouteTarget {
  return { type: 'model', ref: definition.name, name: definition.name };
}

/** The target a route key names, with its current name; null when it no longer exists. */
export function targetOfKey(
  key: string,
  candidates: Candidates,
  chatModels: readonly ModelDefinition[],
): RouteTarget | null {
  const separator = key.indexOf(':');
  const type = key.slice(0, separator);
  const ref = key.slice(separator + 1);
  if (type === 'agent')
    return candidates.agents.find((agent) => agent.target.ref === ref)?.target ?? null;
  if (type === 'pipeline') {
    return candidates.pipelines.find((pipeline) => pipeline.target.ref === ref)?.target ?? null;
  }
  const definition = chatModels.find((model) => model.name === ref);
  return definition === undefined ? null : { type: 'model', ref, name: ref };
}

/** The current target of a policy's route_to action (null when it no longer exists). */
export function policyTarget(
  action: { type: RouteType; target: string },
  candidates: Candidates,
  chatModels: readonly ModelDefinition[],
): RouteTarget | null {
  return targetOfKey(routeKey({ type: action.type, ref: action.target }), candidates, chatModels);
}

function describeMatches(matches: readonly RouteTarget[]): string {
  return matches.map((target) => `${target.type} ${target.ref}`).join(', ');
}

/** An agent or pipeline of the account (by id or name) or a catalog chat model (by name). */
export function resolveTarget(
  reference: string,
  type: RouteType | null,
  candidates: Candidates,
  chatModels: readonly ModelDefinition[],
  param: string,
): RouteTarget {
  const lowered = reference.toLowerCase();
  const named = (target: RouteTarget) =>
    target.ref === reference || target.name.toLowerCase() === lowered;
  const found: RouteTarget[] = [];
  if (type === null || type === 'agent') {
    found.push(...candidates.agents.map((agent) => agent.target).filter(named));
  }
  if (type === null || type === 'pipeline') {
    found.push(...candidates.pipelines.map((pipeline) => pipeline.target).filter(named));
  }
  if (type === null || type === 'model') {
    const model = chatModels.find((definition) => definition.name === reference);
    if (model !== undefined) found.push(modelTarget(model));
  }
  const byId = found.filter((target) => target.ref === reference);
  const matches = byId.length > 0 ? byId : found;
  if (matches.length === 0) {
    throw new InvalidParameterError(
      param,
      `'${reference}' names no ${type ?? 'agent, pipeline or chat model'} of this account (give an agent or pipeline id or name, or a chat model of GET /v1/models).`,
    );
  }
  if (matches.length > 1) {
    throw new InvalidParameterError(
      param,
      `'${reference}' is ambiguous: it names ${describeMatches(matches)}. Give the id (or route_type).`,
    );
  }
  return matches[0]!;
}

/** Whether the policies let a message go to `target` (through the models it would use). */
export function targetAllowed(
  target: RouteTarget,
  candidates: Candidates,
  outcome: PolicyOutcome,
  models: Pick<ModelRegistry, 'find' | 'defaultModel'>,
): boolean {
  const check = (name: string | null) => {
    const definition = models.find(name ?? models.defaultModel ?? '');
    return definition === undefined || modelRestriction(outcome, definition) === null;
  };
  switch (target.type) {
    case 'model':
      return check(target.ref);
    case 'agent': {
      const agent = candidates.agents.find((entry) => entry.target.ref === target.ref);
      return agent !== undefined && check(agent.model);
    }
    case 'pipeline': {
      const pipeline = candidates.pipelines.find((entry) => entry.target.ref === target.ref);
      return pipeline !== undefined && pipeline.models.every((model) => check(model));
    }
  }
}

/** Agents, then pipelines, whose capabilities serve `category`, best matching names first. */
export function capabilityMatches(
  category: IntentCategory,
  message: string,
  candidates: Candidates,
  allowed: (target: RouteTarget) => boolean,
): RouteTarget[] {
  const wanted = taxonomy[category].capabilities;
  if (wanted.length === 0) return [];
  const words = new Set(wordsOf(message));
  const overlap = (set: ReadonlySet<string>) => [...set].filter((word) => words.has(word)).length;
  const serves = (capabilities: readonly string[]) =>
    capabilities.some((capability) => wanted.includes(capability));
  const agents = candidates.agents
    .filter((agent) => serves(agent.capabilities))
    .map((agent) => ({ target: agent.target, rank: overlap(agent.words), kind: 0 }));
  const pipelines = candidates.pipelines
    .filter((pipeline) => serves(pipeline.capabilities))
    .map((pipeline) => ({ target: pipeline.target, rank: overlap(pipeline.words), kind: 1 }));
  return [...agents, ...pipelines]
    .filter((entry) => allowed(entry.target))
    .sort((a, b) => b.rank - a.rank || a.kind - b.kind)
    .map((entry) => entry.target);
}
