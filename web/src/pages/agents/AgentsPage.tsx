// Agents: list, create and edit from each type's configuration schema, execute with an input form,
// see the result and metrics; the runs made here are listed with links to their records.
import { Anchor, Badge, Button, Card, Group, SimpleGrid, Table, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';
import { api, unwrap } from '../../api/client';
import { keys, queries } from '../../api/queries';
import { ErrorAlert, Page } from '../../components/common';
import { StatusBadge } from '../../components/StatusBadge';
import { AgentEditor } from './AgentEditor';
import { AgentRunner, type RunRecord } from './AgentRunner';

function RunsCard({ runs }: { runs: readonly RunRecord[] }) {
  return (
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
              <Table.Td>
                <StatusBadge status={run.status} />
              </Table.Td>
              <Table.Td>{run.timeMs} ms</Table.Td>
              <Table.Td>{run.tokens}</Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Card>
  );
}

type AgentSummary = {
  id: string;
  name: string;
  agent_type: string;
  model_id: string | null;
  is_public: boolean;
  owned: boolean;
};

function AgentsTable({
  agents,
  onOpen,
  onDelete,
}: {
  agents: readonly AgentSummary[];
  onOpen: (id: string) => void;
  onDelete: (id: string) => void;
}) {
  return (
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
          {agents.map((agent) => (
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
                    onClick={() => onOpen(agent.id)}
                    aria-label={`Open ${agent.name}`}
                  >
                    Open
                  </Button>
                  {agent.owned && (
                    <Button
                      size="xs"
                      color="red.9"
                      variant="outline"
                      onClick={() => onDelete(agent.id)}
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
  );
}

export default function AgentsPage() {
  const queryClient = useQueryClient();
  const agents = useQuery(queries.agents());
  const [selected, setSelected] = useState<string | null>(null);
  const [runs, setRuns] = useState<RunRecord[]>([]);
  const remove = useMutation({
    mutationFn: async (id: string) =>
      unwrap(await api.DELETE('/v1/agents/{agent_id}', { params: { path: { agent_id: id } } })),
    onSuccess: (_, id) => {
      setSelected((current) => (current === id ? null : current));
      // The list only: the deleted agent's own record would answer 404.
      return queryClient.invalidateQueries({ queryKey: [...keys.agents, 'list'] });
    },
  });

  return (
    <Page title="Agents">
      <ErrorAlert error={agents.error ?? remove.error} />
      <Card withBorder component="section" aria-labelledby="agents-title">
        <Group justify="space-between" mb="sm">
          <Title order={3} size="h4" id="agents-title">
            Agents
          </Title>
          <Button variant="default" onClick={() => setSelected(null)}>
            New agent
          </Button>
        </Group>
        <AgentsTable
          agents={agents.data?.agents ?? []}
          onOpen={setSelected}
          onDelete={(id) => remove.mutate(id)}
        />
      </Card>
      <SimpleGrid cols={{ base: 1, lg: 2 }}>
        <AgentEditor agentId={selected} onSaved={setSelected} />
        {selected !== null && (
          <AgentRunner
            agentId={selected}
            onRun={(run) => setRuns((current) => [run, ...current])}
          />
        )}
      </SimpleGrid>
      {runs.length > 0 && <RunsCard runs={runs} />}
    </Page>
  );
}
