// Execute the selected agent: a query, the inputs its type takes (data, URLs, the parameters form of
// its schema), and the result with its metrics.
import { Button, Card, Code, Group, Stack, TagsInput, Textarea, Title } from '@mantine/core';
import { useMutation, useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, unwrap } from '../../api/client';
import { queries } from '../../api/queries';
import { ErrorAlert } from '../../components/common';
import { SchemaForm } from '../../components/SchemaForm';

export interface RunRecord {
  executionId: string;
  /** completed, failed, or waiting_for_approval (a ToolAgent's call waits for a person). */
  status: string;
  timeMs: number;
  tokens: number;
}

interface RunInputs {
  query: string;
  parameters: Record<string, unknown>;
  /** JSON text; empty: none. */
  data: string;
  urls: string[];
}

/** Runs the agent; the last result stays on screen while a next run fails, as it always did. */
function useAgentExecution(agentId: string, onRun: (run: RunRecord) => void) {
  const [result, setResult] = useState<unknown>(null);
  const execute = useMutation({
    mutationFn: async ({ query, parameters, data, urls }: RunInputs) =>
      unwrap(
        await api.POST('/v1/agents/{agent_id}/execute', {
          params: { path: { agent_id: agentId } },
          body: {
            query,
            parameters,
            ...(data.trim() === '' ? {} : { data: JSON.parse(data) as never }),
            ...(urls.length === 0 ? {} : { urls }),
          },
        }),
      ),
    onSuccess: (answer) => {
      setResult(answer);
      onRun({
        executionId: answer.execution_id,
        status: answer.status,
        timeMs: answer.metrics.execution_time_ms,
        tokens: answer.metrics.tokens_used,
      });
    },
  });
  return { result, execute };
}

export function AgentRunner({
  agentId,
  onRun,
}: {
  agentId: string;
  onRun: (run: RunRecord) => void;
}) {
  const agent = useQuery(queries.agent(agentId));
  const types = useQuery(queries.agentTypes());
  const [query, setQuery] = useState('');
  const [parameters, setParameters] = useState<Record<string, unknown>>({});
  const [data, setData] = useState('');
  const [urls, setUrls] = useState<string[]>([]);
  const { result, execute } = useAgentExecution(agentId, onRun);
  const type = types.data?.agent_types.find((item) => item.id === agent.data?.agent_type);

  function submit(event: FormEvent) {
    event.preventDefault();
    execute.mutate({ query, parameters, data, urls });
  }

  return (
    <Card withBorder component="section" aria-labelledby="agent-run-title">
      <form onSubmit={submit}>
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
          <ErrorAlert error={execute.error} />
          <Group>
            <Button type="submit" loading={execute.isPending}>
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
