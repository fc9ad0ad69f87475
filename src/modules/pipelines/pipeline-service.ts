// Pipelines of an account: create, read, list, replace stages, delete — with every stage checked at
// save time (agent usable, names unique, mappings well-formed and pointing only backwards).
import {
  InvalidParameterError,
  MissingParameterError,
  NotFoundError,
} from '../../errors/app-error.js';
import { newId } from '../../ids.js';
import type { AgentService } from '../agents/agent-service.js';
import type { PipelinesRepository } from './pipelines.repository.js';
import { assertSafeKeys, assertSafeName, forbiddenKeyError } from '../../validation/safe-keys.js';
import { forbiddenKeyIn, parsePath, PathSyntaxError } from './path-expression.js';
import { checkInputSchema } from './input-schema.js';
import type { LayoutEdge, LayoutNode, Pipeline, PipelineStage, VisualLayout } from './pipeline.js';

/** A stage as a client sends it (the service assigns ids). */
export interface StageInput {
  name: string;
  agent_id: string;
  input_mapping?: Record<string, string> | undefined;
  output_mapping?: Record<string, string> | undefined;
  timeout_ms?: number | undefined;
  retries?: number | undefined;
}

/** A layout node as a client may send it: with `position`, or with `x` and `y` beside `id`. */
export interface LayoutNodeInput {
  id: string;
  position?: { x: number; y: number; [extra: string]: unknown } | undefined;
  x?: number | undefined;
  y?: number | undefined;
  [extra: string]: unknown;
}

/** A layout edge as a client may send it (`id` is made from the ends when absent). */
export interface LayoutEdgeInput {
  id?: string | undefined;
  source: string;
  target: string;
  [extra: string]: unknown;
}

export interface VisualLayoutInput {
  nodes: LayoutNodeInput[];
  edges?: LayoutEdgeInput[] | undefined;
  [extra: string]: unknown;
}

export interface PipelineInput {
  name?: string | undefined;
  description?: string | undefined;
  stages?: StageInput[] | undefined;
  visual_layout?: VisualLayoutInput | undefined;
  expose_as_tool?: boolean | undefined;
  /** Null clears it (any object is then accepted). */
  input_schema?: Record<string, unknown> | null | undefined;
}

/**
 * The agent execution inputs a stage's input_mapping may set (parameters by dotted name); `model`
 * replaces the stage agent's model for the run.
 */
const stageInputName =
  /^(query|data|urls|conversation_id|model|parameters(\.[A-Za-z_][A-Za-z0-9_]*)*)$/;
const outputName = /^[A-Za-z_][A-Za-z0-9_-]*$/;

export const pipelineLimits = { maxStages: 50, maxMappings: 50 };

export interface PipelineServiceOptions {
  pipelines: PipelinesRepository;
  agents: AgentService;
  now?: () => number;
}

/** A left-to-right layout in React Flow's shape, for pipelines saved without one. */
export function generatedLayout(stages: readonly PipelineStage[]): VisualLayout {
  return {
    nodes: stages.map((stage, index) => ({
      id: stage.id,
      type: 'default',
      position: { x: index * 260, y: 0 },
      data: { label: stage.name, agent_id: stage.agent_id },
    })),
    edges: stages.slice(1).map((stage, index) => ({
      id: `edge_${stages[index]!.id}_${stage.id}`,
      source: stages[index]!.id,
      target: stage.id,
    })),
  };
}

/**
 * The stored form of a layout: every node with `position` ({id, x, y} becomes {id, position: {x,
 * y}}), every edge with an id, and both ends of every edge naming a node (else a 400 naming it);
 * a reserved key (`__proto__`, `constructor`, `prototype`) anywhere in it is a 400 naming it.
 */
export function normaliseLayout(layout: VisualLayoutInput): VisualLayout {
  // Its extra fields are the client's own names, kept and given back: none may be reserved.
  assertSafeKeys(layout, 'visual_layout');
  const nodes = layout.nodes.map((node, index): LayoutNode => {
    const { x, y, position, ...rest } = node;
    // One stored shape: `position` wins over top-level x and y, which are not kept beside it.
    if (position !== undefined) return { ...rest, position };
    if (typeof x !== 'number' || typeof y !== 'number') {
      throw new MissingParameterError(
        `visual_layout.nodes[${index}].position`,
        `Layout node '${node.id}' needs a position: {"id": "…", "position": {"x": 0, "y": 0}} or {"id": "…", "x": 0, "y": 0}.`,
      );
    }
    return { ...rest, position: { x, y } };
  });
  const ids = new Set(nodes.map((node) => node.id));
  const edgeIds = new Set<string>();
  const edges = (layout.edges ?? []).map((edge, index): LayoutEdge => {
    for (const end of ['source', 'target'] as const) {
      if (!ids.has(edge[end])) {
        throw new InvalidParameterError(
          `visual_layout.edges[${index}].${end}`,
          `Layout edge ${index + 1}: ${end} '${edge[end]}' is not the id of a node of the layout.`,
        );
      }
    }
    let id = edge.id ?? `edge_${edge.source}_${edge.target}`;
    if (edge.id === undefined && edgeIds.has(id)) id = `${id}_${index}`;
    edgeIds.add(id);
    return { ...edge, id };
  });
  return { ...layout, nodes, edges };
}

/** A mapping's path expression, or a 400 naming the mapping and the stage. */
function parseStagePath(path: string, param: string, stageName: string) {
  try {
    return parsePath(path);
  } catch (error) {
    if (error instanceof PathSyntaxError) {
      throw new InvalidParameterError(param, `Stage '${stageName}': ${error.message}.`);
    }
    throw error;
  }
}

/**
 * The names a stage gives (its name, its input and output names) and its paths, checked as at save
 * time: a 400 naming the field for a reserved name (`__proto__`, `constructor`, `prototype`), an
 * input name that is not an agent input, an output name that is not a key, or a path that does not
 * parse. The runner checks stored stages with it too (saved before a rule existed, or written to
 * the database by other means), so no stage can run with such a name.
 */
export function checkStageNames(
  stage: Pick<PipelineStage, 'name' | 'input_mapping' | 'output_mapping'>,
  at: string,
): void {
  const name = stage.name.trim();
  assertSafeName(name, `${at}.name`, `Stage '${name}': `);
  for (const [key, path] of Object.entries(stage.input_mapping)) {
    const param = `${at}.input_mapping.${key}`;
    const reserved = forbiddenKeyIn(key);
    if (reserved !== null) throw forbiddenKeyError(param, reserved, `Stage '${name}': `);
    if (!stageInputName.test(key)) {
      throw new InvalidParameterError(
        param,
        `Stage '${name}': '${key}' is not an agent input (query, data, urls, conversation_id, model, or parameters.<name>).`,
      );
    }
    parseStagePath(path, param, name);
  }
  for (const [key, path] of Object.entries(stage.output_mapping)) {
    const param = `${at}.output_mapping.${key}`;
    const reserved = forbiddenKeyIn(key);
    if (reserved !== null) throw forbiddenKeyError(param, reserved, `Stage '${name}': `);
    if (!outputName.test(key)) {
      throw new InvalidParameterError(
        param,
        `Stage '${name}': '${key}' is not a valid output name.`,
      );
    }
    parseStagePath(path, param, name);
  }
}

/**
 * A stage's mapping paths, as at save time: inputs come from the run's input or an earlier stage
 * (`earlier`, by name), outputs from the stage agent's result.
 */
function checkStagePaths(
  stages: readonly StageInput[],
  index: number,
  stage: {
    name: string;
    inputMapping: Record<string, string>;
    outputMapping: Record<string, string>;
  },
  earlier: ReadonlySet<string>,
): void {
  const at = `stages[${index}]`;
  const { name, inputMapping, outputMapping } = stage;
  for (const [key, path] of Object.entries(inputMapping)) {
    const param = `${at}.input_mapping.${key}`;
    const parsed = parseStagePath(path, param, name);
    if (parsed.root === 'output') {
      throw new InvalidParameterError(
        param,
        `Stage '${name}': an input cannot come from $.output; use $.input.<name> or $.stages.<earlier stage>.<key>.`,
      );
    }
    if (parsed.root === 'stages' && !earlier.has(parsed.stage ?? '')) {
      throw new InvalidParameterError(
        param,
        parsed.stage === name ||
          !stages.slice(index).some((later) => later.name.trim() === parsed.stage)
          ? `Stage '${name}': '${path}' refers to stage '${parsed.stage ?? ''}', which is not an earlier stage.`
          : `Stage '${name}': '${path}' refers to stage '${parsed.stage ?? ''}', which runs later; inputs may come only from earlier stages.`,
      );
    }
  }
  for (const [key, path] of Object.entries(outputMapping)) {
    const param = `${at}.output_mapping.${key}`;
    const parsed = parseStagePath(path, param, name);
    if (parsed.root !== 'output') {
      throw new InvalidParameterError(
        param,
        `Stage '${name}': an output mapping must be $.output.<key>, not '${path}'.`,
      );
    }
  }
}

export class PipelineService {
  private readonly now: () => number;

  constructor(private readonly options: PipelineServiceOptions) {
    this.now = options.now ?? Date.now;
  }

  async create(accountId: string, input: PipelineInput & { name: string }): Promise<Pipeline> {
    const stages = await this.checkStages(accountId, input.stages ?? [], []);
    const now = new Date(this.now()).toISOString();
    const pipeline: Pipeline = {
      id: newId('pipe'),
      accountId,
      name: input.name,
      description: input.description ?? '',
      stages,
      visualLayout: input.visual_layout === undefined ? null : normaliseLayout(input.visual_layout),
      exposeAsTool: input.expose_as_tool ?? false,
      inputSchema:
        input.input_schema === undefined || input.input_schema === null
          ? null
          : checkInputSchema(input.input_schema),
      createdAt: now,
      updatedAt: now,
    };
    await this.options.pipelines.insert(pipeline);
    return pipeline;
  }

  /** The account's pipelines exposed as tools of POST /mcp, oldest first, at most `limit`. */
  exposedAsTools(accountId: string, limit: number): Promise<Pipeline[]> {
    return this.options.pipelines.listExposed(accountId, limit);
  }

  async get(accountId: string, id: string): Promise<Pipeline> {
    const pipeline = await this.options.pipelines.find(accountId, id);
    if (pipeline === undefined) throw new NotFoundError('Pipeline', id);
    return pipeline;
  }

  list(accountId: string, page: { limit: number; offset: number }) {
    return this.options.pipelines.list(accountId, page);
  }

  /** The given fields change; `stages` replaces the list, in order (a stage keeps its id when its name is kept). */
  async update(accountId: string, id: string, input: PipelineInput): Promise<Pipeline> {
    const pipeline = await this.get(accountId, id);
    const stages =
      input.stages === undefined
        ? pipeline.stages
        : await this.checkStages(accountId, input.stages, pipeline.stages);
    const updated: Pipeline = {
      ...pipeline,
      ...(input.name === undefined ? {} : { name: input.name }),
      ...(input.description === undefined ? {} : { description: input.description }),
      stages,
      visualLayout:
        input.visual_layout !== undefined
          ? normaliseLayout(input.visual_layout)
          : input.stages !== undefined
            ? null
            : pipeline.visualLayout,
      ...(input.expose_as_tool === undefined ? {} : { exposeAsTool: input.expose_as_tool }),
      ...(input.input_schema === undefined
        ? {}
        : {
            inputSchema: input.input_schema === null ? null : checkInputSchema(input.input_schema),
          }),
      updatedAt: new Date(this.now()).toISOString(),
    };
    await this.options.pipelines.update(updated);
    return updated;
  }

  async delete(accountId: string, id: string): Promise<void> {
    if (!(await this.options.pipelines.delete(accountId, id)))
      throw new NotFoundError('Pipeline', id);
  }

  layoutOf(pipeline: Pipeline): VisualLayout {
    return pipeline.visualLayout ?? generatedLayout(pipeline.stages);
  }

  /** Pipelines of any account whose stages run `agentId` (for deleting agents). */
  usingAgent(agentId: string) {
    return this.options.pipelines.usingAgent(agentId);
  }

  private async checkStages(
    accountId: string,
    stages: readonly StageInput[],
    previous: readonly PipelineStage[],
  ): Promise<PipelineStage[]> {
    if (stages.length > pipelineLimits.maxStages) {
      throw new InvalidParameterError(
        'stages',
        `A pipeline has at most ${pipelineLimits.maxStages} stages.`,
      );
    }
    const earlier = new Set<string>();
    const checked: PipelineStage[] = [];
    for (const [index, stage] of stages.entries()) {
      const at = `stages[${index}]`;
      const name = stage.name.trim();
      if (name === '')
        throw new MissingParameterError(`${at}.name`, `Stage ${index + 1} needs a name.`);
      const inputMapping = stage.input_mapping ?? {};
      const outputMapping = stage.output_mapping ?? {};
      checkStageNames({ name, input_mapping: inputMapping, output_mapping: outputMapping }, at);
      if (earlier.has(name)) {
        throw new InvalidParameterError(
          `${at}.name`,
          `Stage name '${name}' is used twice; stage names are unique.`,
        );
      }
      try {
        await this.options.agents.get(accountId, stage.agent_id);
      } catch (error) {
        if (!(error instanceof NotFoundError)) throw error;
        throw new InvalidParameterError(
          `${at}.agent_id`,
          `Stage '${name}': agent '${stage.agent_id}' does not exist or is not usable by this account.`,
        );
      }
      checkStagePaths(stages, index, { name, inputMapping, outputMapping }, earlier);
      if (
        Object.keys(inputMapping).length + Object.keys(outputMapping).length >
        pipelineLimits.maxMappings
      ) {
        throw new InvalidParameterError(
          at,
          `Stage '${name}' has more than ${pipelineLimits.maxMappings} mappings.`,
        );
      }
      earlier.add(name);
      checked.push({
        id: previous.find((kept) => kept.name === name)?.id ?? newId('stage'),
        name,
        agent_id: stage.agent_id,
        input_mapping: inputMapping,
        output_mapping: outputMapping,
        ...(stage.timeout_ms === undefined ? {} : { timeout_ms: stage.timeout_ms }),
        ...(stage.retries === undefined ? {} : { retries: stage.retries }),
      });
    }
    return checked;
  }
}
