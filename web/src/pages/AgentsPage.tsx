// Agents: list, create and edit from each type's configuration schema, execute with an input form,
// see the result and metrics; the runs made here are listed with links to their records.
import {
  Anchor,
  Badge,
  Button,
  Card,
  Code,
  Group,
  Select,
  SimpleGrid,
  Stack,
  Switch,
  Table,
  TagsInput,
  Text,
  Textarea,
  TextInput,
  Title,
} from '@mantine/core';
import { useEffect, useState, type FormEvent } from 'react';
import { Link } from 'react-router';
import { api, unwrap } from '../api/client';
import { ErrorAlert, Page, useLoad } from '../components/common';
import { SchemaForm, defaultsOf } from '../components/SchemaForm';

interface RunRecord {
  executionId: string;
  success: boolean;
  timeMs: number;
  tokens: number;
}

function AgentEditor({
  agentId,
  onSaved,
}: {
  agentId: string | null;
  onSaved: (id: string) => void;
}) {
  const types = useLoad(async () => unwrap(await api.GET('/v1/agent-types')));
  const models = useLoad(async () => unwrap(await api.GET('/v1/models')));
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [agentType, setAgentType] = useState<string | null>(null);
  const [modelId, setModelId] = useState<string | null>(null);
  const [isPublic, setIsPublic] = useState(false);
  const [configuration, setConfiguration] = useState<Record<string, unknown>>({});
  const [error, setError] = useState<unknown>(null);
  const [formKey, setFormKey] = useState(0);

  useEffect(() => {
    setError(null);
    if (agentId === null) {
      setName('');
      setDescription('');
      setAgentType(null);
      setModelId(null);
      setIsPublic(false);
      setConfiguration({});
      setFormKey((value) => value + 1);
      return;
    }
    void api
      .GET('/v1/agents/{agent_id}', { params: { path: { agent_id: agentId } } })
      .then((result) => {
        if (result.data === undefined) return;
        setName(result.data.name);
        setDescription(result.data.description);
        setAgentType(result.data.agent_type);
        setModelId(result.data.model_id);
        setIsPublic(result.data.is_public);
        setConfiguration(result.data.configuration);
        setFormKey((value) => value + 1);
      });
  }, [agentId]);

  const type = types.data?.agent_types.find((item) => item.id === agentType);

  async function save(event: FormEvent) {
    event.preventDefault();
    setError(null);
    try {
      if (agentId === null) {
        const created = unwrap(
          await api.POST('/v1/agents', {
            body: {
              name,
              description,
              agent_type: agentType ?? '',
              is_public: isPublic,
              configuration,
              ...(modelId === null ? {} : { model_id: modelId }),
            },
          }),
        );
        onSaved(created.id);
      } else {
        unwrap(
          await api.PATCH('/v1/agents/{agent_id}', {
            params: { path: { agent_id: agentId } },
            body: { name, description, is_public: isPublic, configuration, model_id: modelId },
          }),
        );
        onSaved(agentId);
      }
    } catch (reason) {
      setError(reason);
    }
  }

  return (
    <Card withBorder component="section" aria-labelledby="agent-editor-title">
      <form onSubmit={(event) => void save(event)}>
        <Stack>
          <Title order={3} size="h4" id="agent-editor-title">
            {agentId === null ? 'Create an agent' : 'Edit the agent'}
          </Title>
          <TextInput
            label="Name"
            required
            value={name}
            onChange={(e) => setName(e.currentTarget.value)}
          />
          <Textarea
            label="Description"
            value={description}
            onChange={(e) => setDescription(e.currentTarget.value)}
          />
          <Select
            label="Type"
            required
            disabled={agentId !== null}
            data={(types.data?.agent_types ?? []).map((item) => ({
              value: item.id,
              label: item.name,
            }))}
            value={agentType}
            onChange={(value) => {
              setAgentType(value);
              const chosen = types.data?.agent_types.find((item) => item.id === value);
              setConfiguration(chosen === undefined ? {} : defaultsOf(chosen.configuration_schema));
              setFormKey((current) => current + 1);
            }}
          />
          {type && <Text size="sm">{type.description}</Text>}
          <Select
            label="Model"
            placeholder="default model"
            clearable
            data={(models.data?.models ?? [])
              .filter((item) => item.type === 'chat')
              .map((item) => item.name)}
            value={modelId}
            onChange={setModelId}
          />
          <Switch
            label="Public (other accounts may read and run it)"
            checked={isPublic}
            onChange={(e) => setIsPublic(e.currentTarget.checked)}
          />
          {type && (
            <fieldset style={{ border: 'none', padding: 0, margin: 0 }}>
              <legend>
                <Text fw={600} size="sm">
                  Configuration
                </Text>
              </legend>
              <SchemaForm
                key={formKey}
                idPrefix="configuration"
                schema={type.configuration_schema}
                value={configuration}
                onChange={setConfiguration}
              />
            </fieldset>
          )}
          <ErrorAlert error={error} title="The agent was not saved" />
          <Group>
            <Button type="submit">{agentId === null ? 'Create agent' : 'Save agent'}</Button>
          </Group>
        </Stack>
      </form>
    </Card>
  );
}

function AgentRunner({ agentId, onRun }: { agentId: string; onRun: (run: RunRecord) => void }) {
  const agent = useLoad(
    async () =>
      unwrap(await api.GET('/v1/agents/{agent_id}', { params: { path: { agent_id: agentId } } })),
    [agentId],
  );
  const types = useLoad(async () => unwrap(await api.GET('/v1/agent-types')));
  const [query, setQuery] = useState('');
  const [parameters, setParameters] = useState<Record<string, unknown>>({});
  const [data, setData] = useState('');
  const [urls, setUrls] = useState<string[]>([]);
  const [result, setResult] = useState<unknown>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const type = types.data?.agent_types.find((item) => item.id === agent.data?.agent_type);

  async function run(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const answer = unwrap(
        await api.POST('/v1/agents/{agent_id}/execute', {
          params: { path: { agent_id: agentId } },
          body: {
            query,
            parameters,
            ...(data.trim() === '' ? {} : { data: JSON.parse(data) as never }),
            ...(urls.length === 0 ? {} : { urls }),
          },
        }),
      );
      setResult(answer);
      onRun({
        executionId: answer.execution_id,
        success: answer.success,
        timeMs: answer.metrics.execution_time_ms,
        tokens: answer.metrics.tokens_used,
      });
    } catch (reason) {
      setError(reason);
    } finally {
      setBusy(false);
    }
  }

  return (
    <Card withBorder component="section" aria-labelledby="agent-run-title">
      <form onSubmit={(event) => void run(event)}>
        <Stack>
          <Title order={3} size="h4" id="agent-run-title">
            Execute {agent.data?.name}
          </Title>
          <Textarea
            label="Query"
            autosize
            minRows={2}
            value={query}
            onChange={(e) => setQuery(e.currentTarget.value)}
          />
          {agent.data?.agent_type === 'StructureAgent' && (
            <Textarea
              label="Data"
              description="An array of objects (JSON) or CSV text in a JSON string."
              autosize
              minRows={2}
              value={data}
              onChange={(e) => setData(e.currentTarget.value)}
            />
          )}
          {agent.data?.agent_type === 'WebAgent' && (
            <TagsInput label="URLs" value={urls} onChange={setUrls} />
          )}
          {type && (
            <SchemaForm
              idPrefix="parameters"
              schema={type.parameters_schema}
              value={parameters}
              onChange={setParameters}
            />
          )}
          <ErrorAlert error={error} />
          <Group>
            <Button type="submit" loading={busy}>
              Execute
            </Button>
          </Group>
          {result !== null && (
            <Code block aria-label="Result" data-testid="agent-result">
              {JSON.stringify(result, null, 2)}
            </Code>
          )}
        </Stack>
      </form>
    </Card>
  );
}

export default function AgentsPage() {
  const agents = useLoad(async () =>
    unwrap(await api.GET('/v1/agents', { params: { query: { limit: 100, offset: 0 } } })),
  );
  const [selected, setSelected] = useState<string | null>(null);
  const [runs, setRuns] = useState<RunRecord[]>([]);
  const [error, setError] = useState<unknown>(null);

  async function remove(id: string) {
    setError(null);
    try {
      unwrap(await api.DELETE('/v1/agents/{agent_id}', { params: { path: { agent_id: id } } }));
      if (selected === id) setSelected(null);
      agents.reload();
    } catch (reason) {
      setError(reason);
    }
  }

  return (
    <Page title="Agents">
      <ErrorAlert error={agents.error ?? error} />
      <Card withBorder component="section" aria-labelledby="agents-title">
        <Group justify="space-between" mb="sm">
          <Title order={3} size="h4" id="agents-title">
            Agents
          </Title>
          <Button variant="default" onClick={() => setSelected(null)}>
            New agent
          </Button>
        </Group>
        <Table.ScrollContainer minWidth={600}>
          <Table striped>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Name</Table.Th>
                <Table.Th>Type</Table.Th>
                <Table.Th>Model</Table.Th>
                <Table.Th>Visibility</Table.Th>
                <Table.Th>Actions</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {agents.data?.agents.map((agent) => (
                <Table.Tr key={agent.id}>
                  <Table.Td>{agent.name}</Table.Td>
                  <Table.Td>{agent.agent_type}</Table.Td>
                  <Table.Td>{agent.model_id ?? 'default'}</Table.Td>
                  <Table.Td>
                    <Badge variant="filled" color="gray.8">
                      {agent.is_public ? 'public' : 'private'}
                    </Badge>
                  </Table.Td>
                  <Table.Td>
                    <Group gap="xs">
                      <Button
                        size="xs"
                        variant="default"
                        onClick={() => setSelected(agent.id)}
                        aria-label={`Open ${agent.name}`}
                      >
                        Open
                      </Button>
                      {agent.owned && (
                        <Button
                          size="xs"
                          color="red.9"
                          variant="outline"
                          onClick={() => void remove(agent.id)}
                          aria-label={`Delete ${agent.name}`}
                        >
                          Delete
                        </Button>
                      )}
                    </Group>
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      </Card>
      <SimpleGrid cols={{ base: 1, lg: 2 }}>
        <AgentEditor
          agentId={selected}
          onSaved={(id) => {
            setSelected(id);
            agents.reload();
          }}
        />
        {selected !== null && (
          <AgentRunner
            agentId={selected}
            onRun={(run) => setRuns((current) => [run, ...current])}
          />
        )}
      </SimpleGrid>
      {runs.length > 0 && (
        <Card withBorder component="section" aria-labelledby="agent-history-title">
          <Title order={3} size="h4" id="agent-history-title" mb="xs">
            Runs in this session
          </Title>
          <Table>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Execution</Table.Th>
                <Table.Th>Outcome</Table.Th>
                <Table.Th>Time</Table.Th>
                <Table.Th>Tokens</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {runs.map((run) => (
                <Table.Tr key={run.executionId}>
                  <Table.Td>
                    <Anchor component={Link} to={`/executions/${run.executionId}`}>
                      {run.executionId}
                    </Anchor>
                  </Table.Td>
                  <Table.Td>{run.success ? 'completed' : 'failed'}</Table.Td>
                  <Table.Td>{run.timeMs} ms</Table.Td>
                  <Table.Td>{run.tokens}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Card>
      )}
    </Page>
  );
}
