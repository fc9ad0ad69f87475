// Pipelines of an account: create, read, list, replace stages, delete — with every stage checked at
// save time (agent usable, names unique, mappings well-formed and pointing only backwards).
import {
  InvalidParameterError,
  MissingParameterError,
  NotFoundError,
} from '../errors/app-error.js';
import { newId } from '../ids.js';
import type { AgentService } from '../agents/agent-service.js';
import type {
  Pipeline,
  PipelineStage,
  PipelinesRepository,
  VisualLayout,
} from '../storage/repositories/pipelines.repository.js';
import { parsePath, PathSyntaxError } from './path-expression.js';

/** A stage as a client sends it (the service assigns ids). */
export interface StageInput {
  name: string;
  agent_id: string;
  input_mapping?: Record<string, string> | undefined;
  output_mapping?: Record<string, string> | undefined;
  timeout_ms?: number | undefined;
  retries?: number | undefined;
}

export interface PipelineInput {
  name?: string | undefined;
  description?: string | undefined;
  stages?: StageInput[] | undefined;
  visual_layout?: VisualLayout | undefined;
}

/** The agent execution inputs a stage's input_mapping may set (parameters by dotted name). */
const stageInputName = /^(query|data|urls|conversation_id|parameters(\.[A-Za-z_][A-Za-z0-9_]*)*)$/;
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
      visualLayout: input.visual_layout ?? null,
      createdAt: now,
      updatedAt: now,
    };
    await this.options.pipelines.insert(pipeline);
    return pipeline;
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
          ? input.visual_layout
          : input.stages !== undefined
            ? null
            : pipeline.visualLayout,
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
      const inputMapping = stage.input_mapping ?? {};
      for (const [key, path] of Object.entries(inputMapping)) {
        const param = `${at}.input_mapping.${key}`;
        if (!stageInputName.test(key)) {
          throw new InvalidParameterError(
            param,
            `Stage '${name}': '${key}' is not an agent input (query, data, urls, conversation_id, or parameters.<name>).`,
          );
        }
        let parsed;
        try {
          parsed = parsePath(path);
        } catch (error) {
          if (error instanceof PathSyntaxError)
            throw new InvalidParameterError(param, `Stage '${name}': ${error.message}.`);
          throw error;
        }
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
      const outputMapping = stage.output_mapping ?? {};
      for (const [key, path] of Object.entries(outputMapping)) {
        const param = `${at}.output_mapping.${key}`;
        if (!outputName.test(key)) {
          throw new InvalidParameterError(
            param,
            `Stage '${name}': '${key}' is not a valid output name.`,
          );
        }
        let parsed;
        try {
          parsed = parsePath(path);
        } catch (error) {
          if (error instanceof PathSyntaxError)
            throw new InvalidParameterError(param, `Stage '${name}': ${error.message}.`);
          throw error;
        }
        if (parsed.root !== 'output') {
          throw new InvalidParameterError(
            param,
            `Stage '${name}': an output mapping must be $.output.<key>, not '${path}'.`,
          );
        }
      }
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
