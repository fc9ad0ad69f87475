// Routing: try a message (intent, route, alternatives, rationale), teach the router where a message
// should have gone, and manage the routing policies.
import {
  Alert,
  Badge,
  Button,
  Card,
  Code,
  Group,
  Select,
  SimpleGrid,
  Stack,
  Table,
  Text,
  Textarea,
  Title,
} from '@mantine/core';
import { useState, type FormEvent } from 'react';
import { api, unwrap, type paths } from '../api/client';
import { ErrorAlert, Page, useLoad } from '../components/common';
import { featureEnabled } from '../components/features';

type RouteResult =
  paths['/v1/routing/route']['post']['responses'][200]['content']['application/json'];
type PolicyBody =
  paths['/v1/routing/policies']['post']['requestBody']['content']['application/json'];
type RoutingStrategy = 'balanced' | 'quality' | 'cost' | 'latency';
type RouteTarget = { type: 'agent' | 'pipeline' | 'model'; name: string };

type CatalogModel = { name: string; type: string; available: boolean; default: boolean };

/**
 * An example policy that can be saved as it stands: it routes to a chat model of the catalog the
 * API reports (the default one, else the first available, else the first); without a chat model it
 * caps max_tokens instead.
 */
function examplePolicy(models: readonly CatalogModel[]): string {
  const chat = models.filter((model) => model.type === 'chat');
  const model =
    chat.find((model) => model.default) ?? chat.find((model) => model.available) ?? chat[0];
  const policy =
    model === undefined
      ? {
          name: 'short answers to greetings',
          priority: 10,
          conditions: { intent_categories: ['GREETING'] },
          actions: { max_tokens: 200 },
        }
      : {
          name: `code questions go to ${model.name}`,
          priority: 10,
          conditions: { intent_categories: ['CODE'] },
          actions: { route_to: { type: 'model', target: model.name } },
        };
  return JSON.stringify(policy, null, 2);
}

export default function RoutingPage() {
  const enabled = useLoad(() => featureEnabled('autonomous_routing'));
  const agents = useLoad(async () =>
    unwrap(await api.GET('/v1/agents', { params: { query: { limit: 100, offset: 0 } } })),
  );
  const pipelines = useLoad(async () =>
    unwrap(await api.GET('/v1/pipelines', { params: { query: { limit: 100, offset: 0 } } })),
  );
  const models = useLoad(async () => unwrap(await api.GET('/v1/models')));
  const [message, setMessage] = useState('');
  const [strategy, setStrategy] = useState<string | null>('balanced');
  const [route, setRoute] = useState<RouteResult | null>(null);
  const [target, setTarget] = useState<string | null>(null);
  const [taught, setTaught] = useState<string | null>(null);
  // null until edited: the example, once the catalog has loaded.
  const [policyText, setPolicyText] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const policies = useLoad(
    async () =>
      enabled.data === true ? unwrap(await api.GET('/v1/routing/policies')).policies : null,
    [enabled.data],
  );

  const targets = [
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

  async function tryMessage(event: FormEvent) {
    event.preventDefault();
    setError(null);
    setTaught(null);
    try {
      setRoute(
        unwrap(
          await api.POST('/v1/routing/route', {
            body: {
              message,
              ...(strategy === null
                ? {}
                : { context: { preferences: { routing_strategy: strategy as RoutingStrategy } } }),
            },
          }),
        ),
      );
    } catch (reason) {
      setError(reason);
    }
  }

  async function teach() {
    if (target === null) return;
    const chosen = JSON.parse(target) as RouteTarget;
    setError(null);
    try {
      const answer = unwrap(
        await api.POST('/v1/routing/feedback', {
          body: { message, selected_route: chosen.name, route_type: chosen.type },
        }),
      );
      setTaught(`Taught: “${message}” → ${answer.route_type} ${answer.route_to}.`);
    } catch (reason) {
      setError(reason);
    }
  }

  async function createPolicy(event: FormEvent) {
    event.preventDefault();
    setError(null);
    let definition: unknown;
    try {
      definition = JSON.parse(policyText ?? examplePolicy(models.data?.models ?? []));
    } catch {
      setError(new Error('The policy is not valid JSON.'));
      return;
    }
    try {
      // The service validates the definition and names the field it refuses.
      unwrap(await api.POST('/v1/routing/policies', { body: definition as PolicyBody }));
      policies.reload();
    } catch (reason) {
      setError(reason);
    }
  }

  async function deletePolicy(id: string) {
    setError(null);
    try {
      unwrap(
        await api.DELETE('/v1/routing/policies/{policy_id}', {
          params: { path: { policy_id: id } },
        }),
      );
      policies.reload();
    } catch (reason) {
      setError(reason);
    }
  }

  const policyList = policies.data ?? [];

  return (
    <Page title="Routing">
      {enabled.data === false && (
        <Alert color="yellow" title="Routing is not enabled" role="status">
          GET /v1/features reports autonomous_routing off: this build has no router, or the
          configuration switched it off.
        </Alert>
      )}
      <ErrorAlert error={error} />
      <SimpleGrid cols={{ base: 1, lg: 2 }}>
        <Card withBorder component="section" aria-labelledby="try-title">
          <form onSubmit={(event) => void tryMessage(event)}>
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
                <Button type="submit" disabled={enabled.data !== true}>
                  Route
                </Button>
              </Group>
            </Stack>
          </form>
        </Card>
        <Card
          withBorder
          component="section"
          aria-labelledby="route-title"
          data-testid="route-result"
        >
          <Stack>
            <Title order={3} size="h4" id="route-title">
              Route
            </Title>
            {route === null && <Text size="sm">No message routed yet.</Text>}
            {route && (
              <>
                <Group gap="xs">
                  <Badge variant="filled" color="blue.9">
                    {route.route_type}
                  </Badge>
                  <Text fw={600} data-testid="route-to">
                    {route.route_to}
                  </Text>
                  <Text size="sm">confidence {route.confidence.toFixed(2)}</Text>
                </Group>
                <Text size="sm">{route.rationale}</Text>
                <Text size="sm">
                  Intent {route.intent.category} ({route.intent.confidence.toFixed(2)}) · decided by{' '}
                  {route.decided_by}
                  {route.policy === null ? '' : ` (policy ${route.policy.name})`}
                </Text>
                {route.notices.map((notice) => (
                  <Text size="sm" key={notice} c="dimmed">
                    {notice}
                  </Text>
                ))}
                {route.alternative_routes.length > 0 && (
                  <Table>
                    <Table.Thead>
                      <Table.Tr>
                        <Table.Th>Alternative</Table.Th>
                        <Table.Th>Type</Table.Th>
                        <Table.Th>Confidence</Table.Th>
                      </Table.Tr>
                    </Table.Thead>
                    <Table.Tbody>
                      {route.alternative_routes.map((alternative) => (
                        <Table.Tr key={`${alternative.route_type}:${alternative.route_id}`}>
                          <Table.Td>{alternative.route_to}</Table.Td>
                          <Table.Td>{alternative.route_type}</Table.Td>
                          <Table.Td>{alternative.confidence.toFixed(2)}</Table.Td>
                        </Table.Tr>
                      ))}
                    </Table.Tbody>
                  </Table>
                )}
                <Group align="flex-end">
                  <Select
                    label="Where it should go"
                    data={targets}
                    value={target}
                    onChange={setTarget}
                    searchable
                  />
                  <Button onClick={() => void teach()} disabled={target === null}>
                    Teach the router
                  </Button>
                </Group>
                {taught && (
                  <Text size="sm" role="status">
                    {taught}
                  </Text>
                )}
              </>
            )}
          </Stack>
        </Card>
      </SimpleGrid>
      <Card withBorder component="section" aria-labelledby="policies-title">
        <Stack>
          <Title order={3} size="h4" id="policies-title">
            Policies
          </Title>
          <Table>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Policy</Table.Th>
                <Table.Th>Definition</Table.Th>
                <Table.Th>Actions</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {policyList.map((policy) => {
                const id = policy.id;
                return (
                  <Table.Tr key={id}>
                    <Table.Td>{policy.name}</Table.Td>
                    <Table.Td>
                      <Code block>{JSON.stringify(policy, null, 2)}</Code>
                    </Table.Td>
                    <Table.Td>
                      <Button
                        size="xs"
                        color="red.9"
                        variant="outline"
                        onClick={() => void deletePolicy(id)}
                      >
                        Delete
                      </Button>
                    </Table.Td>
                  </Table.Tr>
                );
              })}
            </Table.Tbody>
          </Table>
          <form onSubmit={(event) => void createPolicy(event)}>
            <Stack>
              <Textarea
                label="New policy (JSON)"
                autosize
                minRows={6}
                value={policyText ?? (models.data ? examplePolicy(models.data.models) : '')}
                onChange={(event) => setPolicyText(event.currentTarget.value)}
              />
              <Group>
                <Button type="submit" disabled={enabled.data !== true}>
                  Create policy
                </Button>
              </Group>
            </Stack>
          </form>
        </Stack>
      </Card>
    </Page>
  );
}
