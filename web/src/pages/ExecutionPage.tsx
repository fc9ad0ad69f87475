// One execution (agent or pipeline): input, output, error, each stage's input, output and timing,
// and a ToolAgent's steps (grouped by stage in a pipeline). While the run waits for approval, each
// waiting call can be approved (its arguments edited) or rejected here. The page follows the run's
// event stream until it ends, so it shows each step and the end as they happen.
import { Card, Code, Group, Stack, Text, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useParams } from 'react-router';
import { queries, useFollowExecution } from '../api/queries';
import { ErrorAlert, Page, formatDate } from '../components/common';
import { StatusBadge } from '../components/StatusBadge';
import { PendingCall } from './execution/PendingCall';
import { StepsList } from './execution/StepsList';
import type { ExecutionRecord, StageRecord } from './execution/types';

function StageCard({ stage, record }: { stage: StageRecord; record: ExecutionRecord }) {
  const steps = record.steps.filter((step) => step.stage_record_id === stage.id);
  return (
    <Card withBorder>
      <Group gap="xs">
        <Title order={3} size="h5">
          {stage.position + 1}. {stage.name}
        </Title>
        <StatusBadge status={stage.status} />
        <Text size="sm">
          {stage.execution_time_ms ?? '—'} ms · {stage.tokens_used} tokens · {stage.attempts}{' '}
          attempt(s) · started {formatDate(stage.started_at)}
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
      {steps.length > 0 && (
        <>
          <Text size="sm" fw={600} mt="xs">
            Steps of {stage.name}
          </Text>
          <StepsList steps={steps} />
        </>
      )}
    </Card>
  );
}

export default function ExecutionPage() {
  const { executionId = '' } = useParams();
  const execution = useQuery(queries.execution(executionId));
  const record = execution.data?.execution;
  const active = record?.status === 'running' || record?.status === 'waiting_for_approval';
  const followAgain = useFollowExecution(executionId, active);
  // An agent's own steps; a pipeline's are shown in their stage's card.
  const ownSteps = record?.steps.filter((step) => step.stage_record_id === null) ?? [];
  return (
    <Page title={`Execution ${executionId}`}>
      <ErrorAlert error={execution.error} />
      {record && (
        <>
          <Card withBorder>
            <Group gap="xs">
              <StatusBadge status={record.status} data-testid="execution-status" />
              <Text size="sm">
                {record.kind} · started {formatDate(record.created_at)} ·{' '}
                {record.execution_time_ms ?? '—'} ms · {record.tokens_used} tokens
              </Text>
            </Group>
            {record.error && (
              <Text c="red" data-testid="execution-error">
                {record.error}
              </Text>
            )}
            <Title order={3} size="h5" mt="sm">
              Input
            </Title>
            <Code block>{JSON.stringify(record.input, null, 2)}</Code>
            <Title order={3} size="h5" mt="sm">
              Output
            </Title>
            <Code block>{JSON.stringify(record.output, null, 2)}</Code>
          </Card>
          {record.status === 'waiting_for_approval' &&
            record.pending_approvals.map((step) => (
              <PendingCall
                key={step.id}
                executionId={record.id}
                step={step}
                onDecided={followAgain}
              />
            ))}
          {ownSteps.length > 0 && (
            <Card withBorder component="section" aria-labelledby="steps-title">
              <Title order={3} size="h4" id="steps-title" mb="xs">
                Steps
              </Title>
              <StepsList steps={ownSteps} />
            </Card>
          )}
          {record.steps_total > record.steps.length && (
            <Text size="sm" data-testid="steps-shown">
              Showing the first {record.steps.length} of {record.steps_total} steps (GET
              /v1/executions/{record.id}/steps lists them all).
            </Text>
          )}
          <Stack>
            {record.stages.map((stage) => (
              <StageCard key={stage.id} stage={stage} record={record} />
            ))}
          </Stack>
        </>
      )}
    </Page>
  );
}
