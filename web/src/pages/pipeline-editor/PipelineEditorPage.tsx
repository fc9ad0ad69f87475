// The visual pipeline editor (React Flow): stages are nodes, mappings are edges; each node edits its
// stage's agent and input/output mappings; save-time errors are shown on the node they name; runs are
// followed live through the execution's event stream. Loaded on demand.
import '@xyflow/react/dist/style.css';
import {
  Button,
  Card,
  Code,
  Group,
  Switch,
  Text,
  TextInput,
  useComputedColorScheme,
} from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { Background, Controls, ReactFlow, ReactFlowProvider } from '@xyflow/react';
import { useMemo, useState } from 'react';
import { useParams } from 'react-router';
import { queries } from '../../api/queries';
import { ErrorAlert, Page, useSeed } from '../../components/common';
import { ExecutionsCard, RunCard } from './RunCards';
import { EditorContext, StageNodeView } from './StageNodeView';
import { edgesOf, nodesOf, runInputTemplate } from './stages';
import { usePipelineActions } from './usePipelineActions';
import { useStageNodes } from './useStageNodes';

const nodeTypes = { stage: StageNodeView };

function useAgentOptions() {
  const agents = useQuery(queries.agents());
  return useMemo(
    () =>
      (agents.data?.agents ?? []).map((agent) => ({
        value: agent.id,
        label: `${agent.name} (${agent.agent_type})`,
        type: agent.agent_type,
      })),
    [agents.data],
  );
}

/** The pipeline's name and description, adding a stage, saving, and how paths are written. */
function PipelineHeader(props: {
  name: string;
  onNameChange: (name: string) => void;
  description: string;
  onDescriptionChange: (description: string) => void;
  exposeAsTool: boolean;
  onExposeAsToolChange: (expose: boolean) => void;
  saved: string | null;
  onAddStage: () => void;
  onSave: () => void;
}) {
  const { name, onNameChange, description, onDescriptionChange, saved, onAddStage, onSave } = props;
  return (
    <Card withBorder>
      <Group align="flex-end">
        <TextInput
          label="Pipeline name"
          required
          value={name}
          onChange={(event) => onNameChange(event.currentTarget.value)}
        />
        <TextInput
          label="Description"
          value={description}
          onChange={(event) => onDescriptionChange(event.currentTarget.value)}
          w={320}
        />
        <Switch
          label="Offer as an MCP tool (POST /mcp)"
          checked={props.exposeAsTool}
          onChange={(event) => props.onExposeAsToolChange(event.currentTarget.checked)}
        />
        <Button variant="default" onClick={onAddStage}>
          Add stage
        </Button>
        <Button onClick={onSave}>Save pipeline</Button>
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
  );
}

/** The stages and their links, drawn and edited with React Flow. */
function Canvas({ stages }: { stages: ReturnType<typeof useStageNodes> }) {
  const colorScheme = useComputedColorScheme('light');
  const edges = useMemo(() => edgesOf(stages.nodes), [stages.nodes]);
  return (
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
        nodes={stages.nodes}
        edges={edges}
        nodeTypes={nodeTypes}
        onNodesChange={stages.onNodesChange}
        onConnect={stages.onConnect}
        onEdgesDelete={stages.onEdgesDelete}
        colorMode={colorScheme}
        fitView
        fitViewOptions={{ maxZoom: 1 }}
        proOptions={{ hideAttribution: true }}
      >
        <Background />
        <Controls />
      </ReactFlow>
    </div>
  );
}

function Editor() {
  const { pipelineId } = useParams();
  const agents = useAgentOptions();
  const stages = useStageNodes(agents);
  const { nodes, setNodes, update, remove } = stages;
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [exposeAsTool, setExposeAsTool] = useState(false);
  // null until edited: then the Run box follows the stages' $.input paths.
  const [editedRunInput, setRunInput] = useState<string | null>(null);
  const runInput = editedRunInput ?? runInputTemplate(nodes);
  const actions = usePipelineActions({
    pipelineId,
    name,
    description,
    exposeAsTool,
    nodes,
    setNodes,
  });

  const stored = useQuery({
    ...queries.pipeline(pipelineId ?? ''),
    enabled: pipelineId !== undefined,
  });
  useSeed(pipelineId ?? null, stored, ({ pipeline }) => {
    setName(pipeline.name);
    setDescription(pipeline.description);
    setExposeAsTool(pipeline.expose_as_tool);
    setNodes(nodesOf(pipeline));
  });

  const context = useMemo(() => ({ agents, update, remove }), [agents, update, remove]);

  return (
    <Page title={pipelineId === undefined ? 'New pipeline' : `Pipeline ${name}`}>
      <PipelineHeader
        name={name}
        onNameChange={setName}
        description={description}
        onDescriptionChange={setDescription}
        exposeAsTool={exposeAsTool}
        onExposeAsToolChange={setExposeAsTool}
        saved={actions.saved}
        onAddStage={stages.addStage}
        onSave={actions.save}
      />
      <ErrorAlert error={stored.error ?? actions.error} title="The pipeline was not saved or run" />
      <EditorContext.Provider value={context}>
        <Canvas stages={stages} />
      </EditorContext.Provider>
      <RunCard
        runInput={runInput}
        onRunInputChange={setRunInput}
        runState={actions.runState}
        onRun={() => actions.run(runInput)}
      />
      {pipelineId !== undefined && <ExecutionsCard pipelineId={pipelineId} />}
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
