// Running the pipeline (its inputs as JSON, the run's status and output) and its past executions.
import {
  Anchor,
  Button,
  Card,
  Code,
  Group,
  Stack,
  Table,
  Text,
  Textarea,
  Title,
} from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import { queries } from '../../api/queries';
import { formatDate } from '../../components/common';
import type { RunState } from './usePipelineActions';

export function RunCard({
  runInput,
  onRunInputChange,
  runState,
  onRun,
}: {
  runInput: string;
  onRunInputChange: (value: string) => void;
  runState: RunState | null;
  onRun: () => void;
}) {
  return (
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
          onChange={(event) => onRunInputChange(event.currentTarget.value)}
        />
        <Group>
          <Button onClick={onRun}>Save and run</Button>
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
  );
}

export function ExecutionsCard({ pipelineId }: { pipelineId: string }) {
  const executions = useQuery(queries.pipelineExecutions(pipelineId));
  if (executions.data === undefined) return null;
  return (
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
  );
}
