// One execution (agent or pipeline): input, output, error, and each stage's input, output and timing.
import { Badge, Card, Code, Group, Stack, Text, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useParams } from 'react-router';
import { queries } from '../api/queries';
import { ErrorAlert, Page, formatDate } from '../components/common';

export default function ExecutionPage() {
  const { executionId = '' } = useParams();
  const execution = useQuery(queries.execution(executionId));
  const record = execution.data?.execution;
  return (
    <Page title={`Execution ${executionId}`}>
      <ErrorAlert error={execution.error} />
      {record && (
        <>
          <Card withBorder>
            <Group gap="xs">
              <Badge
                variant="filled"
                color={
                  record.status === 'completed'
                    ? 'teal.9'
                    : record.status === 'failed'
                      ? 'red.9'
                      : 'blue.9'
                }
              >
                {record.status}
              </Badge>
              <Text size="sm">
                {record.kind} · started {formatDate(record.created_at)} ·{' '}
                {record.execution_time_ms ?? '—'} ms · {record.tokens_used} tokens
              </Text>
            </Group>
            {record.error && <Text c="red">{record.error}</Text>}
            <Title order={3} size="h5" mt="sm">
              Input
            </Title>
            <Code block>{JSON.stringify(record.input, null, 2)}</Code>
            <Title order={3} size="h5" mt="sm">
              Output
            </Title>
            <Code block>{JSON.stringify(record.output, null, 2)}</Code>
          </Card>
          <Stack>
            {record.stages.map((stage) => (
              <Card key={stage.id} withBorder>
                <Group gap="xs">
                  <Title order={3} size="h5">
                    {stage.position + 1}. {stage.name}
                  </Title>
                  <Badge variant="filled" color="gray.8">
                    {stage.status}
                  </Badge>
                  <Text size="sm">
                    {stage.execution_time_ms ?? '—'} ms · {stage.tokens_used} tokens ·{' '}
                    {stage.attempts} attempt(s) · started {formatDate(stage.started_at)}
                  </Text>
                </Group>
                {stage.error && <Text c="red">{stage.error}</Text>}
                <Text size="sm" fw={600} mt="xs">
                  Input
                </Text>
                <Code block>{JSON.stringify(stage.input, null, 2)}</Code>
                <Text size="sm" fw={600} mt="xs">
                  Output
                </Text>
                <Code block>{JSON.stringify(stage.output, null, 2)}</Code>
              </Card>
            ))}
          </Stack>
        </>
      )}
    </Page>
  );
}
