// The route chosen for the message tried (intent, alternatives, rationale), and teaching the router
// where that message should have gone instead.
import { Badge, Button, Card, Group, Select, Stack, Table, Text, Title } from '@mantine/core';
import { useState } from 'react';
import type { RouteResult, RouteTarget } from './routing-actions';

function Alternatives({ route }: { route: RouteResult }) {
  return (
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
  );
}

export function RouteCard({
  route,
  targets,
  taught,
  onTeach,
}: {
  route: RouteResult | null;
  /** Each option's value is a RouteTarget as JSON. */
  targets: { value: string; label: string }[];
  taught: string | null;
  onTeach: (target: RouteTarget) => void;
}) {
  const [target, setTarget] = useState<string | null>(null);
  return (
    <Card withBorder component="section" aria-labelledby="route-title" data-testid="route-result">
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
            {route.alternative_routes.length > 0 && <Alternatives route={route} />}
            <Group align="flex-end">
              <Select
                label="Where it should go"
                data={targets}
                value={target}
                onChange={setTarget}
                searchable
              />
              <Button
                onClick={() => target !== null && onTeach(JSON.parse(target) as RouteTarget)}
                disabled={target === null}
              >
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
  );
}
