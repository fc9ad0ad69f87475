// The stages being edited: adding, changing, renaming (mappings that read a stage follow it),
// connecting (the target reads the source's main result) and disconnecting stages.
import { applyNodeChanges, type Connection, type Edge, type NodeChange } from '@xyflow/react';
import { useCallback, useState } from 'react';
import { mainResultKey, newNodeId, stagePath, type StageData, type StageNode } from './stages';

type AgentOption = { value: string; label: string; type: string };

/** Renaming a stage keeps the mappings that read it pointing at it. */
function followRename(node: StageNode, from: string, to: string): StageNode {
  return {
    ...node,
    data: {
      ...node.data,
      inputMapping: node.data.inputMapping.map(([key, path]): [string, string] => [
        key,
        path.startsWith(from) ? to + path.slice(from.length) : path,
      ]),
    },
  };
}

/** Deleted edges drop the target's mappings that read the source. */
function withoutEdges(current: StageNode[], deleted: Edge[]): StageNode[] {
  return current.map((node) => {
    const sources = deleted
      .filter((edge) => edge.target === node.id)
      .map((edge) => current.find((item) => item.id === edge.source)?.data.name);
    if (sources.length === 0) return node;
    const inputMapping = node.data.inputMapping.filter(
      ([, path]) =>
        !sources.some((source) => source !== undefined && path.startsWith(stagePath(source))),
    );
    return { ...node, data: { ...node.data, inputMapping } };
  });
}

function withNewStage(current: StageNode[]): StageNode[] {
  const rightmost = current.reduce((max, node) => Math.max(max, node.position.x), -400);
  let index = current.length + 1;
  while (current.some((node) => node.data.name === `stage_${index}`)) index += 1;
  const stage: StageNode = {
    id: newNodeId(),
    type: 'stage',
    position: { x: rightmost + 400, y: 40 },
    data: {
      name: `stage_${index}`,
      agentId: null,
      inputMapping: current.length === 0 ? [['query', '$.input.question']] : [],
      outputMapping: [],
      error: null,
      status: null,
    },
  };
  return [...current, stage];
}

export function useStageNodes(agents: AgentOption[]) {
  const [nodes, setNodes] = useState<StageNode[]>([]);

  const update = useCallback((id: string, patch: Partial<StageData>) => {
    setNodes((current) => {
      const previousName = current.find((node) => node.id === id)?.data.name;
      const renamed =
        patch.name !== undefined && previousName !== undefined && patch.name !== previousName;
      return current.map((node) => {
        if (node.id === id) return { ...node, data: { ...node.data, ...patch, error: null } };
        if (!renamed) return node;
        return followRename(node, stagePath(previousName), stagePath(patch.name ?? ''));
      });
    });
  }, []);

  const remove = useCallback(
    (id: string) => setNodes((current) => current.filter((node) => node.id !== id)),
    [],
  );

  const onNodesChange = useCallback(
    (changes: NodeChange<StageNode>[]) => setNodes((current) => applyNodeChanges(changes, current)),
    [],
  );

  const onConnect = useCallback(
    (connection: Connection) => {
      setNodes((current) => {
        const source = current.find((node) => node.id === connection.source);
        if (source === undefined || connection.source === connection.target) return current;
        const sourceType = agents.find((agent) => agent.value === source.data.agentId)?.type;
        const key = sourceType === undefined ? 'text' : (mainResultKey[sourceType] ?? 'text');
        const path = `${stagePath(source.data.name)}.${key}`;
        return current.map((node) => {
          if (node.id !== connection.target) return node;
          const others = node.data.inputMapping.filter(([name]) => name !== 'query');
          return {
            ...node,
            data: { ...node.data, inputMapping: [['query', path], ...others], error: null },
          };
        });
      });
    },
    [agents],
  );

  const onEdgesDelete = useCallback(
    (deleted: Edge[]) => setNodes((current) => withoutEdges(current, deleted)),
    [],
  );

  const addStage = useCallback(() => setNodes(withNewStage), []);

  return { nodes, setNodes, update, remove, onNodesChange, onConnect, onEdgesDelete, addStage };
}
