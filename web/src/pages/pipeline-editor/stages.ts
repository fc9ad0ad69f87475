// The editor's model: each stage is a React Flow node, and the edges follow from the stages' input
// mappings; conversions from a stored pipeline and to the body that saves it.
import type { Edge, Node } from '@xyflow/react';
import type { paths } from '../../api/client';

export interface StageData extends Record<string, unknown> {
  name: string;
  agentId: string | null;
  inputMapping: [string, string][];
  outputMapping: [string, string][];
  error: string | null;
  status: string | null;
}

export type StageNode = Node<StageData, 'stage'>;

type StoredPipeline =
  paths['/v1/pipelines/{pipeline_id}']['get']['responses'][200]['content']['application/json']['pipeline'];

/** The result key a following stage most likely wants from each agent type (api-contract.md). */
export const mainResultKey: Record<string, string> = {
  RetrievalAgent: 'documents',
  SummarizationAgent: 'summary',
  ReasoningAgent: 'conclusion',
  GenerationAgent: 'text',
  WebAgent: 'results',
  StructureAgent: 'markdown',
};

/** The names of `$.input.<name>` (or `$.input["name"]`) paths, in mapping order, each once. */
function runInputNames(nodes: readonly StageNode[]): string[] {
  const names = new Set<string>();
  for (const node of nodes) {
    for (const [, path] of node.data.inputMapping) {
      const match = /^\$\.input(?:\.([A-Za-z_][A-Za-z0-9_-]*)|\["([^"]+)"\])/.exec(path.trim());
      const name = match?.[1] ?? match?.[2];
      if (name !== undefined) names.add(name);
    }
  }
  return [...names];
}

/** The Run box's starting text: each input the stages read, empty. */
export function runInputTemplate(nodes: readonly StageNode[]): string {
  return JSON.stringify(
    Object.fromEntries(runInputNames(nodes).map((name) => [name, ''])),
    null,
    2,
  );
}

/** `$.stages.<name>` or `$.stages["name"]` references in a stage's input mapping. */
function referencedStages(data: StageData): string[] {
  const names: string[] = [];
  for (const [, path] of data.inputMapping) {
    const match = /^\$\.stages(?:\.([A-Za-z_][A-Za-z0-9_-]*)|\["([^"]+)"\])/.exec(path);
    const name = match?.[1] ?? match?.[2];
    if (name !== undefined) names.push(name);
  }
  return names;
}

export function stagePath(name: string): string {
  return /^[A-Za-z_][A-Za-z0-9_-]*$/.test(name) ? `$.stages.${name}` : `$.stages["${name}"]`;
}

/** Edges follow from the mappings: a stage that reads another stage's output is connected to it. */
export function edgesOf(nodes: StageNode[]): Edge[] {
  const byName = new Map(nodes.map((node) => [node.data.name, node.id]));
  const edges: Edge[] = [];
  for (const node of nodes) {
    for (const name of new Set(referencedStages(node.data))) {
      const source = byName.get(name);
      if (source !== undefined && source !== node.id) {
        edges.push({
          id: `${source}->${node.id}`,
          source,
          target: node.id,
          animated: node.data.status === 'running',
          ariaLabel: `${name} feeds ${node.data.name}`,
        });
      }
    }
  }
  return edges;
}

/** Stages in an order where every stage comes after those it reads (then left to right). */
export function orderedStages(nodes: StageNode[]): StageNode[] {
  const byName = new Map(nodes.map((node) => [node.data.name, node]));
  const placed = new Set<string>();
  const result: StageNode[] = [];
  const visit = (node: StageNode, trail: Set<string>) => {
    if (placed.has(node.id) || trail.has(node.id)) return;
    trail.add(node.id);
    for (const name of referencedStages(node.data)) {
      const dependency = byName.get(name);
      if (dependency !== undefined) visit(dependency, trail);
    }
    placed.add(node.id);
    result.push(node);
  };
  for (const node of [...nodes].sort((a, b) => a.position.x - b.position.x)) visit(node, new Set());
  return result;
}

let nodeCounter = 0;
export function newNodeId(): string {
  nodeCounter += 1;
  return `node-${Date.now().toString(36)}-${nodeCounter}`;
}

/** A stored pipeline's stages as nodes, where its visual layout placed them (else in a row). */
export function nodesOf(pipeline: StoredPipeline): StageNode[] {
  const stages = pipeline.configuration.stages;
  const positions = new Map<string, { x: number; y: number }>();
  for (const node of pipeline.visual_layout.nodes) {
    const stageName = typeof node.data?.stage === 'string' ? node.data.stage : null;
    const stage = stages.find((item) => item.id === node.id || item.name === stageName);
    if (stage !== undefined) positions.set(stage.name, { x: node.position.x, y: node.position.y });
  }
  return stages.map((stage, index) => ({
    id: newNodeId(),
    type: 'stage',
    position: positions.get(stage.name) ?? { x: index * 400, y: 40 },
    data: {
      name: stage.name,
      agentId: stage.agent_id,
      inputMapping: Object.entries(stage.input_mapping),
      outputMapping: Object.entries(stage.output_mapping),
      error: null,
      status: null,
    },
  }));
}

/** The body that saves the pipeline: its stages in reading order, and where each node sits. */
export function pipelineBody(name: string, description: string, ordered: StageNode[]) {
  return {
    name,
    description,
    stages: ordered.map((node) => ({
      name: node.data.name,
      agent_id: node.data.agentId ?? '',
      input_mapping: Object.fromEntries(
        node.data.inputMapping.filter(([key]) => key.trim() !== ''),
      ),
      output_mapping: Object.fromEntries(
        node.data.outputMapping.filter(([key]) => key.trim() !== ''),
      ),
    })),
    visual_layout: {
      nodes: ordered.map((node) => ({
        id: node.id,
        position: node.position,
        data: { stage: node.data.name },
      })),
      edges: edgesOf(ordered).map(({ id, source, target }) => ({ id, source, target })),
    },
  };
}
