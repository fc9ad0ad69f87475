// Routing: try a message (intent, route, alternatives, rationale), teach the router where a message
// should have gone, and manage the routing policies.
import {
  Alert,
  Button,
  Card,
  Group,
  Select,
  SimpleGrid,
  Stack,
  Textarea,
  Title,
} from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { queries, useFeatureEnabled } from '../../api/queries';
import { ErrorAlert, Page } from '../../components/common';
import { PoliciesCard } from './PoliciesCard';
import { RouteCard } from './RouteCard';
import { useRoutingActions, type RouteTarget } from './routing-actions';

/** Where a message may be taught to go: the agents, pipelines and chat models, each once. */
function useRouteTargets(): { value: string; label: string }[] {
  const agents = useQuery(queries.agents());
  const pipelines = useQuery(queries.pipelines());
  const models = useQuery(queries.models());
  return [
    ...(agents.data?.agents ?? []).map((agent) => ({
      value: JSON.stringify({ type: 'agent', name: agent.name } satisfies RouteTarget),
      label: `agent: ${agent.name}`,
    })),
    ...(pipelines.data?.pipelines ?? []).map((pipeline) => ({
      value: JSON.stringify({ type: 'pipeline', name: pipeline.name } satisfies RouteTarget),
      label: `pipeline: ${pipeline.name}`,
    })),
    ...(models.data?.models ?? [])
      .filter((model) => model.type === 'chat')
      .map((model) => ({
        value: JSON.stringify({ type: 'model', name: model.name } satisfies RouteTarget),
        label: `model: ${model.name}`,
      })),
  ].filter(
    (option, index, all) => all.findIndex((other) => other.value === option.value) === index,
  );
}

export default function RoutingPage() {
  const enabled = useFeatureEnabled('autonomous_routing');
  const targets = useRouteTargets();
  const actions = useRoutingActions();
  const [message, setMessage] = useState('');
  const [strategy, setStrategy] = useState<string | null>('balanced');

  function submit(event: FormEvent) {
    event.preventDefault();
    actions.tryMessage({ message, strategy });
  }

  return (
    <Page title="Routing">
      {enabled === false && (
        <Alert color="yellow" title="Routing is not enabled" role="status">
          GET /v1/features reports autonomous_routing off: this build has no router, or the
          configuration switched it off.
        </Alert>
      )}
      <ErrorAlert error={actions.error} />
      <SimpleGrid cols={{ base: 1, lg: 2 }}>
        <Card withBorder component="section" aria-labelledby="try-title">
          <form onSubmit={submit}>
            <Stack>
              <Title order={3} size="h4" id="try-title">
                Try a message
              </Title>
              <Textarea
                label="Message"
                required
                autosize
                minRows={2}
                value={message}
                onChange={(event) => setMessage(event.currentTarget.value)}
              />
              <Select
                label="Strategy"
                data={['balanced', 'quality', 'cost', 'latency']}
                value={strategy}
                onChange={setStrategy}
                clearable
              />
              <Group>
                <Button type="submit" disabled={enabled !== true}>
                  Route
                </Button>
              </Group>
            </Stack>
          </form>
        </Card>
        <RouteCard
          route={actions.route}
          targets={targets}
          taught={actions.taught}
          onTeach={(target) => actions.teach({ message, target })}
        />
      </SimpleGrid>
      <PoliciesCard
        enabled={enabled}
        onCreate={(definition) => actions.createPolicy(definition)}
        onDelete={(id) => actions.deletePolicy(id)}
      />
    </Page>
  );
}
