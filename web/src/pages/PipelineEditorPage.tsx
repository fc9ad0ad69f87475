// The visual pipeline editor (React Flow): stages are nodes, mappings are edges; each node edits its
// stage's agent and input/output mappings; save-time errors are shown on the node they name; runs are
// followed live through the execution's event stream. Loaded on demand.
import '@xyflow/react/dist/style.css';
import {
  Anchor,
  Badge,
  Button,
  Card,
  Code,
  Group,
  Select,
  Stack,
  Table,
  Text,
  Textarea,
  TextInput,
  Title,
  useComputedColorScheme,
} from '@mantine/core';
import {
  Background,
  Controls,
  Handle,
  Position,
  ReactFlow,
  ReactFlowProvider,
  applyNodeChanges,
  type Connection,
  type Edge,
  type Node,
  type NodeChange,
  type NodeProps,
} from '@xyflow/react';
import { createContext, useCallback, useContext, useEffect, useMemo, useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { api, ApiCallError, unwrap } from '../api/client';
import { ErrorAlert, Page, formatDate, useLoad } from '../components/common';

interface StageData extends Record<string, unknown> {
  name: string;
  agentId: string | null;
  inputMapping: [string, string][];
  outputMapping: [string, string][];
  error: string | null;
  status: string | null;
}

type StageNode = Node<StageData, 'stage'>;

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
function runInputTemplate(nodes: readonly StageNode[]): string {
  return JSON.stringify(
    Object.fromEntries(runInputNames(nodes).map((name) => [name, ''])),
    null,
    2,
  );
}

/** The result key a following stage most likely wants from each agent type (api-contract.md). */
const mainResultKey: Record<string, string> = {
  RetrievalAgent: 'documents',
  SummarizationAgent: 'summary',
  ReasoningAgent: 'conclusion',
  GenerationAgent: 'text',
  WebAgent: 'results',
  StructureAgent: 'markdown',
};

interface EditorContextValue {
  agents: { value: string; label: string; type: string }[];
  update(id: string, patch: Partial<StageData>): void;
  remove(id: string): void;
}

const EditorContext = createContext<EditorContextValue | null>(null);

function MappingRows({
  label,
  rows,
  onChange,
  nodeName,
}: {
  label: string;
  rows: [string, string][];
  onChange: (rows: [string, string][]) => void;
  nodeName: string;
}) {
  return (
    <Stack gap={4}>
      <Text size="xs" fw={600}>
        {label}
      </Text>
      {rows.map(([key, path], index) => (
        <Group key={index} gap={4} wrap="nowrap">
          <TextInput
            className="nodrag"
            size="xs"
            w={90}
            aria-label={`${label} name ${index + 1} of ${nodeName}`}
            value={key}
            onChange={(event) => {
              const next = [...rows];
              next[index] = [event.currentTarget.value, path];
              onChange(next);
            }}
          />
          <TextInput
            className="nodrag"
            size="xs"
            w={190}
            aria-label={`${label} path ${index + 1} of ${nodeName}`}
            value={path}
            onChange={(event) => {
              const next = [...rows];
              next[index] = [key, event.currentTarget.value];
              onChange(next);
            }}
          />
          <Button
            className="nodrag"
            size="compact-xs"
            variant="subtle"
            aria-label={`Remove ${label} ${key || index + 1} of ${nodeName}`}
            onClick={() => onChange(rows.filter((_, position) => position !== index))}
          >
            ✕
          </Button>
        </Group>
      ))}
      <Button
        className="nodrag"
        size="compact-xs"
        variant="default"
        onClick={() => onChange([...rows, ['', '']])}
        aria-label={`Add ${label} to ${nodeName}`}
      >
        + mapping
      </Button>
    </Stack>
  );
}

function StageNodeView({ id, data }: NodeProps<StageNode>) {
  const context = useContext(EditorContext);
  if (context === null) return null;
  const statusColor =
    data.status === 'completed'
      ? 'teal.9'
      : data.status === 'failed'
        ? 'red.9'
        : data.status === 'running'
          ? 'blue.9'
          : 'gray.8';
  return (
    <>
      <Handle type="target" position={Position.Left} />
      <Card
        withBorder
        shadow="sm"
        p="xs"
        w={340}
        data-testid={`stage-node-${data.name}`}
        data-status={data.status ?? 'idle'}
        style={
          data.error === null
            ? undefined
            : { borderColor: 'var(--mantine-color-red-8)', borderWidth: 2 }
        }
        role="group"
        aria-label={`Stage ${data.name}`}
      >
        <Stack gap={6}>
          <Group justify="space-between" wrap="nowrap">
            <TextInput
              className="nodrag"
              size="xs"
              aria-label="Stage name"
              value={data.name}
              onChange={(event) => context.update(id, { name: event.currentTarget.value })}
            />
            {data.status && (
              <Badge color={statusColor} variant="filled" data-testid="stage-status">
                {data.status}
              </Badge>
            )}
            <Button
              className="nodrag"
              size="compact-xs"
              variant="subtle"
              color="red.9"
              onClick={() => context.remove(id)}
              aria-label={`Delete stage ${data.name}`}
            >
              ✕
            </Button>
          </Group>
          <Select
            className="nodrag"
            size="xs"
            label="Agent"
            placeholder="Pick an agent"
            data={context.agents.map(({ value, label }) => ({ value, label }))}
            value={data.agentId}
            onChange={(value) => context.update(id, { agentId: value })}
          />
          <MappingRows
            label="Input mapping"
            nodeName={data.name}
            rows={data.inputMapping}
            onChange={(rows) => context.update(id, { inputMapping: rows })}
          />
          <MappingRows
            label="Output mapping"
            nodeName={data.name}
            rows={data.outputMapping}
            onChange={(rows) => context.update(id, { outputMapping: rows })}
          />
          {data.error && (
            <Text size="xs" c="red" role="alert" data-testid="stage-error">
              {data.error}
            </Text>
          )}
        </Stack>
      </Card>
      <Handle type="source" position={Position.Right} />
    </>
  );
}

const nodeTypes = { stage: StageNodeView };

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

function stagePath(name: string): string {
  return /^[A-Za-z_][A-Za-z0-9_-]*$/.test(name) ? `$.stages.${name}` : `$.stages["${name}"]`;
}

/** Edges follow from the mappings: a stage that reads another stage's output is connected to it. */
function edgesOf(nodes: StageNode[]): Edge[] {
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
function orderedStages(nodes: StageNode[]): StageNode[] {
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
function newNodeId(): string {
  nodeCounter += 1;
  return `node-${Date.now().toString(36)}-${nodeCounter}`;
}

function Editor() {
  const { pipelineId } = useParams();
  const navigate = useNavigate();
  const colorScheme = useComputedColorScheme('light');
  const agentsLoad = useLoad(async () =>
    unwrap(await api.GET('/v1/agents', { params: { query: { limit: 100, offset: 0 } } })),
  );
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [nodes, setNodes] = useState<StageNode[]>([]);
  const [error, setError] = useState<unknown>(null);
  const [saved, setSaved] = useState<string | null>(null);
  // null until edited: then the Run box follows the stages' $.input paths.
  const [editedRunInput, setRunInput] = useState<string | null>(null);
  const runInput = editedRunInput ?? runInputTemplate(nodes);
  const [runState, setRunState] = useState<{
    executionId: string;
    status: string;
    output: unknown;
  } | null>(null);
  const executions = useLoad(
    async () =>
      pipelineId === undefined
        ? null
        : unwrap(
            await api.GET('/v1/pipelines/{pipeline_id}/executions', {
              params: { path: { pipeline_id: pipelineId }, query: { limit: 20, offset: 0 } },
            }),
          ),
    [pipelineId, runState?.status],
  );

  useEffect(() => {
    if (pipelineId === undefined) return;
    void api
      .GET('/v1/pipelines/{pipeline_id}', { params: { path: { pipeline_id: pipelineId } } })
      .then((result) => {
        if (result.data === undefined) {
          setError(result.error);
          return;
        }
        const { pipeline } = result.data;
        const stages = pipeline.configuration.stages;
        setName(pipeline.name);
        setDescription(pipeline.description);
        const positions = new Map<string, { x: number; y: number }>();
        for (const node of pipeline.visual_layout.nodes) {
          const stageName = typeof node.data?.stage === 'string' ? node.data.stage : null;
          const stage = stages.find((item) => item.id === node.id || item.name === stageName);
          if (stage !== undefined)
            positions.set(stage.name, { x: node.position.x, y: node.position.y });
        }
        setNodes(
          stages.map((stage, index) => ({
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
          })),
        );
      });
  }, [pipelineId]);

  const agents = useMemo(
    () =>
      (agentsLoad.data?.agents ?? []).map((agent) => ({
        value: agent.id,
        label: `${agent.name} (${agent.agent_type})`,
        type: agent.agent_type,
      })),
    [agentsLoad.data],
  );

  const update = useCallback((id: string, patch: Partial<StageData>) => {
    setNodes((current) => {
      const previousName = current.find((node) => node.id === id)?.data.name;
      const renamed =
        patch.name !== undefined && previousName !== undefined && patch.name !== previousName;
      return current.map((node) => {
        if (node.id === id) return { ...node, data: { ...node.data, ...patch, error: null } };
        if (!renamed) return node;
        // Renaming a stage keeps the mappings that read it pointing at it.
        const from = stagePath(previousName);
        const to = stagePath(patch.name ?? '');
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
      });
    });
  }, []);
  const remove = useCallback(
    (id: string) => setNodes((current) => current.filter((node) => node.id !== id)),
    [],
  );
  const context = useMemo(() => ({ agents, update, remove }), [agents, update, remove]);

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

  const onEdgesDelete = useCallback((deleted: Edge[]) => {
    setNodes((current) =>
      current.map((node) => {
        const sources = deleted
          .filter((edge) => edge.target === node.id)
          .map((edge) => current.find((item) => item.id === edge.source)?.data.name);
        if (sources.length === 0) return node;
        return {
          ...node,
          data: {
            ...node.data,
            inputMapping: node.data.inputMapping.filter(
              ([, path]) =>
                !sources.some(
                  (source) => source !== undefined && path.startsWith(stagePath(source)),
                ),
            ),
          },
        };
      }),
    );
  }, []);

  function addStage() {
    setNodes((current) => {
      const rightmost = current.reduce((max, node) => Math.max(max, node.position.x), -400);
      let index = current.length + 1;
      while (current.some((node) => node.data.name === `stage_${index}`)) index += 1;
      return [
        ...current,
        {
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
        },
      ];
    });
  }

  async function save(): Promise<string | null> {
    setError(null);
    setSaved(null);
    const ordered = orderedStages(nodes);
    const body = {
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
    try {
      if (pipelineId === undefined) {
        const created = unwrap(await api.POST('/v1/pipelines', { body }));
        setSaved('Saved.');
        void navigate(`/pipelines/${created.id}`, { replace: true });
        return created.id;
      }
      unwrap(
        await api.PATCH('/v1/pipelines/{pipeline_id}', {
          params: { path: { pipeline_id: pipelineId } },
          body,
        }),
      );
      setNodes((current) =>
        current.map((node) => ({ ...node, data: { ...node.data, error: null } })),
      );
      setSaved('Saved.');
      return pipelineId;
    } catch (reason) {
      // A save-time error names its stage in `param` (stages[2].input_mapping.query): shown on that node.
      const param = reason instanceof ApiCallError ? reason.param : null;
      const index = param === null ? null : /^stages\[(\d+)\]/.exec(param)?.[1];
      const target = index === undefined || index === null ? undefined : ordered[Number(index)];
      if (target !== undefined) {
        setNodes((current) =>
          current.map((node) => ({
            ...node,
            data: { ...node.data, error: node.id === target.id ? (reason as Error).message : null },
          })),
        );
      }
      setError(reason);
      return null;
    }
  }

  async function run() {
    setError(null);
    let inputs: Record<string, unknown>;
    try {
      inputs = JSON.parse(runInput) as Record<string, unknown>;
    } catch {
      setError(new Error('The run inputs are not valid JSON.'));
      return;
    }
    const id = await save();
    if (id === null) return;
    try {
      const started = unwrap(
        await api.POST('/v1/pipelines/{pipeline_id}/execute', {
          params: { path: { pipeline_id: id } },
          body: { ...inputs, async: true } as never,
        }),
      );
      const executionId = started.execution_id;
      setRunState({ executionId, status: 'running', output: null });
      setNodes((current) =>
        current.map((node) => ({ ...node, data: { ...node.data, status: 'pending' } })),
      );
      const source = new EventSource(`/v1/executions/${executionId}/events`, {
        withCredentials: true,
      });
      source.onmessage = (message: MessageEvent<string>) => {
        const event = JSON.parse(message.data) as {
          type: string;
          stage?: string;
          status?: string;
          output?: unknown;
        };
        if (event.type === 'stage-start' || event.type === 'stage-end') {
          const status = event.type === 'stage-start' ? 'running' : (event.status ?? 'completed');
          setNodes((current) =>
            current.map((node) =>
              node.data.name === event.stage ? { ...node, data: { ...node.data, status } } : node,
            ),
          );
        } else if (event.type === 'execution-end') {
          setRunState({
            executionId,
            status: event.status ?? 'completed',
            output: event.output ?? null,
          });
          source.close();
        }
      };
      source.onerror = () => source.close();
    } catch (reason) {
      setError(reason);
    }
  }

  const edges = useMemo(() => edgesOf(nodes), [nodes]);

  return (
    <Page title={pipelineId === undefined ? 'New pipeline' : `Pipeline ${name}`}>
      <Card withBorder>
        <Group align="flex-end">
          <TextInput
            label="Pipeline name"
            required
            value={name}
            onChange={(event) => setName(event.currentTarget.value)}
          />
          <TextInput
            label="Description"
            value={description}
            onChange={(event) => setDescription(event.currentTarget.value)}
            w={320}
          />
          <Button variant="default" onClick={addStage}>
            Add stage
          </Button>
          <Button onClick={() => void save()}>Save pipeline</Button>
        </Group>
        <Text size="sm" mt="xs">
          Drag from a stage’s right handle to another stage’s left handle to feed it; paths are{' '}
          <Code>$.input.&lt;name&gt;</Code>, <Code>$.stages.&lt;stage&gt;.&lt;key&gt;</Code>, and in
          output mappings <Code>$.output.&lt;key&gt;</Code>.
        </Text>
        {saved && (
          <Text size="sm" role="status" mt="xs">
            {saved}
          </Text>
        )}
      </Card>
      <ErrorAlert error={error} title="The pipeline was not saved or run" />
      <EditorContext.Provider value={context}>
        <div
          style={{
            height: 460,
            border: '1px solid var(--mantine-color-default-border)',
            borderRadius: 4,
          }}
          aria-label="Pipeline canvas"
          role="region"
        >
          <ReactFlow
            nodes={nodes}
            edges={edges}
            nodeTypes={nodeTypes}
            onNodesChange={onNodesChange}
            onConnect={onConnect}
            onEdgesDelete={onEdgesDelete}
            colorMode={colorScheme}
            fitView
            fitViewOptions={{ maxZoom: 1 }}
            proOptions={{ hideAttribution: true }}
          >
            <Background />
            <Controls />
          </ReactFlow>
        </div>
      </EditorContext.Provider>
      <Card withBorder component="section" aria-labelledby="run-title">
        <Stack>
          <Title order={3} size="h4" id="run-title">
            Run
          </Title>
          <Textarea
            label="Inputs (JSON)"
            autosize
            minRows={3}
            value={runInput}
            onChange={(event) => setRunInput(event.currentTarget.value)}
          />
          <Group>
            <Button onClick={() => void run()}>Save and run</Button>
            {runState && (
              <Text size="sm" role="status" data-testid="run-status">
                Run{' '}
                <Anchor component={Link} to={`/executions/${runState.executionId}`}>
                  {runState.executionId}
                </Anchor>
                : {runState.status}
              </Text>
            )}
          </Group>
          {runState?.output !== null && runState?.output !== undefined && (
            <Code block aria-label="Run output">
              {JSON.stringify(runState.output, null, 2)}
            </Code>
          )}
        </Stack>
      </Card>
      {executions.data && (
        <Card withBorder component="section" aria-labelledby="executions-title">
          <Title order={3} size="h4" id="executions-title" mb="xs">
            Executions
          </Title>
          <Table>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Execution</Table.Th>
                <Table.Th>Status</Table.Th>
                <Table.Th>Started</Table.Th>
                <Table.Th>Time</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {executions.data.executions.map((execution) => (
                <Table.Tr key={execution.id}>
                  <Table.Td>
                    <Anchor component={Link} to={`/executions/${execution.id}`}>
                      {execution.id}
                    </Anchor>
                  </Table.Td>
                  <Table.Td>{execution.status}</Table.Td>
                  <Table.Td>{formatDate(execution.created_at)}</Table.Td>
                  <Table.Td>{execution.execution_time_ms ?? '—'} ms</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Card>
      )}
    </Page>
  );
}

export default function PipelineEditorPage() {
  return (
    <ReactFlowProvider>
      <Editor />
    </ReactFlowProvider>
  );
}
