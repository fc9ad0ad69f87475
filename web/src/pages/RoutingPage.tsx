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
import { api, callJson, unwrap } from '../api/client';
import { ErrorAlert, Page, useLoad } from '../components/common';
import { featureEnabled } from '../components/features';

interface RouteResult {
  route_to: string;
  route_type: string;
  confidence: number;
  rationale: string;
  intent?: { id?: string; category?: string; confidence?: number };
  alternative_routes?: { route_to?: string; route_type?: string; confidence?: number }[];
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function asRoute(data: unknown): RouteResult | null {
  if (!isRecord(data) || typeof data.route_to !== 'string') return null;
  return {
    route_to: data.route_to,
    route_type: typeof data.route_type === 'string' ? data.route_type : '',
    confidence: typeof data.confidence === 'number' ? data.confidence : 0,
    rationale: typeof data.rationale === 'string' ? data.rationale : '',
    intent: isRecord(data.intent) ? data.intent : undefined,
    alternative_routes: Array.isArray(data.alternative_routes)
      ? (data.alternative_routes as RouteResult['alternative_routes'])
      : [],
  };
}

const examplePolicy = `{
  "name": "code goes to the code model",
  "priority": 10,
  "conditions": { "intent_categories": ["CODE"] },
  "actions": { "route_to": "gpt-4o" }
}`;

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
  const [intent, setIntent] = useState<unknown>(null);
  const [target, setTarget] = useState<string | null>(null);
  const [taught, setTaught] = useState<string | null>(null);
  const [policyText, setPolicyText] = useState(examplePolicy);
  const [error, setError] = useState<unknown>(null);
  const policies = useLoad(
    async () =>
      enabled.data === true ? (await callJson('GET', '/v1/routing/policies')).data : null,
    [enabled.data],
  );

  const targets = [
    ...(agents.data?.agents ?? []).map((agent) => ({
      value: agent.name,
      label: `agent: ${agent.name}`,
    })),
    ...(pipelines.data?.pipelines ?? []).map((pipeline) => ({
      value: pipeline.name,
      label: `pipeline: ${pipeline.name}`,
    })),
    ...(models.data?.models ?? [])
      .filter((model) => model.type === 'chat')
      .map((model) => ({ value: model.name, label: `model: ${model.name}` })),
  ].filter(
    (option, index, all) => all.findIndex((other) => other.value === option.value) === index,
  );

  async function tryMessage(event: FormEvent) {
    event.preventDefault();
    setError(null);
    setTaught(null);
    try {
      const [intentAnswer, routeAnswer] = await Promise.all([
        callJson('POST', '/v1/routing/intent', { message }),
        callJson('POST', '/v1/routing/route', {
          message,
          ...(strategy === null
            ? {}
            : { context: { preferences: { routing_strategy: strategy } } }),
        }),
      ]);
      setIntent(isRecord(intentAnswer.data) ? intentAnswer.data.intent : null);
      setRoute(asRoute(routeAnswer.data));
    } catch (reason) {
      setError(reason);
    }
  }

  async function teach() {
    if (target === null) return;
    setError(null);
    try {
      const answer = await callJson('POST', '/v1/routing/feedback', {
        message,
        selected_route: target,
      });
      const id =
        isRecord(answer.data) && typeof answer.data.feedback_id === 'string'
          ? answer.data.feedback_id
          : '';
      setTaught(`Taught: “${message}” → ${target} (${id}).`);
    } catch (reason) {
      setError(reason);
    }
  }

  async function createPolicy(event: FormEvent) {
    event.preventDefault();
    setError(null);
    try {
      await callJson('POST', '/v1/routing/policies', JSON.parse(policyText) as unknown);
      policies.reload();
    } catch (reason) {
      setError(reason);
    }
  }

  async function deletePolicy(id: string) {
    setError(null);
    try {
      await callJson('DELETE', `/v1/routing/policies/${encodeURIComponent(id)}`);
      policies.reload();
    } catch (reason) {
      setError(reason);
    }
  }

  const policyList =
    isRecord(policies.data) && Array.isArray(policies.data.policies)
      ? (policies.data.policies as Record<string, unknown>[])
      : [];

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
                {isRecord(intent) && (
                  <Text size="sm">
                    Intent {String(intent.category)} ({Number(intent.confidence ?? 0).toFixed(2)})
                  </Text>
                )}
                {(route.alternative_routes ?? []).length > 0 && (
                  <Table>
                    <Table.Thead>
                      <Table.Tr>
                        <Table.Th>Alternative</Table.Th>
                        <Table.Th>Type</Table.Th>
                        <Table.Th>Confidence</Table.Th>
                      </Table.Tr>
                    </Table.Thead>
                    <Table.Tbody>
                      {(route.alternative_routes ?? []).map((alternative, index) => (
                        <Table.Tr key={index}>
                          <Table.Td>{alternative.route_to}</Table.Td>
                          <Table.Td>{alternative.route_type}</Table.Td>
                          <Table.Td>{(alternative.confidence ?? 0).toFixed(2)}</Table.Td>
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
                const id = typeof policy.id === 'string' ? policy.id : '';
                return (
                  <Table.Tr key={id}>
                    <Table.Td>{typeof policy.name === 'string' ? policy.name : id}</Table.Td>
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
                value={policyText}
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
