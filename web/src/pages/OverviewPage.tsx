// Health, features, models with availability and reasons, and recent activity.
import { Badge, Card, Group, SimpleGrid, Stack, Table, Text, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import type { paths } from '../api/client';
import { queries } from '../api/queries';
import { useAuth } from '../auth';
import { ErrorAlert, Page, formatDate } from '../components/common';
import { formatUsd } from './usage/money';

function HealthCard() {
  const health = useQuery(queries.health());
  return (
    <Card withBorder>
      <Title order={3} size="h4" mb="xs">
        Health
      </Title>
      <ErrorAlert error={health.error} />
      {health.data && (
        <Stack gap={4}>
          <Group>
            <Badge color={health.data.status === 'ok' ? 'teal.9' : 'red.9'} variant="filled">
              {health.data.status}
            </Badge>
            <Text size="sm">
              {health.data.service} {health.data.version}
            </Text>
          </Group>
          <Text size="sm">Database: {health.data.checks.database}</Text>
          <Text size="sm">Redis: {health.data.checks.redis}</Text>
        </Stack>
      )}
    </Card>
  );
}

function FeaturesCard() {
  const features = useQuery(queries.features());
  return (
    <Card withBorder>
      <Title order={3} size="h4" mb="xs">
        Features
      </Title>
      <ErrorAlert error={features.error} />
      <Group gap="xs">
        {features.data &&
          features.data.features.map((feature) => (
            <Badge
              key={feature.name}
              variant="filled"
              color={feature.enabled ? 'teal.9' : 'gray.8'}
              title={feature.description}
            >
              {feature.name}: {feature.enabled ? 'on' : 'off'}
            </Badge>
          ))}
      </Group>
    </Card>
  );
}

type CatalogModel =
  paths['/v1/models']['get']['responses'][200]['content']['application/json']['models'][number];

/** A model's deployments and their health: healthy, cooling down (until when), or due a probe. */
function DeploymentList({ model }: { model: CatalogModel }) {
  return (
    <ul
      aria-label={`Deployments of ${model.display_name}`}
      style={{ margin: 0, paddingLeft: '1.2em' }}
    >
      {model.deployments.map((deployment) => (
        <li key={deployment.name}>
          <Text span size="sm">
            {deployment.name} ({deployment.connection} {deployment.model}, weight{' '}
            {deployment.weight}):{' '}
            {deployment.health === 'healthy'
              ? 'healthy'
              : deployment.health === 'cooling'
                ? `cooling down after ${deployment.failures} failure${deployment.failures === 1 ? '' : 's'}, until ${new Date(deployment.cooling_until ?? '').toLocaleTimeString()}`
                : 'cooldown over, next request probes it'}
          </Text>
        </li>
      ))}
    </ul>
  );
}

/** The catalog's models, and why each one that is not available is not. */
function ModelsCard() {
  const models = useQuery(queries.models());
  return (
    <Card withBorder>
      <Title order={3} size="h4" mb="xs">
        Models
      </Title>
      <ErrorAlert error={models.error} />
      <Table.ScrollContainer minWidth={600}>
        <Table striped>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Name</Table.Th>
              <Table.Th>Made by</Table.Th>
              <Table.Th>Served through</Table.Th>
              <Table.Th>Type</Table.Th>
              <Table.Th>Available</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {models.data?.models.map((model) => (
              <Table.Tr key={model.name}>
                <Table.Td>{model.display_name}</Table.Td>
                {/* The spec's `provider` is the maker, `unknown` for a server that does not say. */}
                <Table.Td>{model.provider === 'unknown' ? '—' : model.provider}</Table.Td>
                <Table.Td>
                  {model.connection}
                  {model.deployments.length > 0 && <DeploymentList model={model} />}
                </Table.Td>
                <Table.Td>{model.type}</Table.Td>
                <Table.Td>
                  {model.available ? 'yes' : `no — ${model.unavailable_reason ?? 'unknown reason'}`}
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Table.ScrollContainer>
    </Card>
  );
}

type Activity =
  paths['/v1/usage']['get']['responses'][200]['content']['application/json']['recent_activity'][number];

/** What an activity row was: a call (its model and route) or a run (its agent or pipeline, models). */
function activityText(item: Activity): string {
  const models = item.models.length > 0 ? item.models.join(', ') : (item.model ?? 'no model yet');
  if (item.source === 'agent') return `agent ${item.agent_name ?? item.agent_id ?? ''} · ${models}`;
  if (item.source === 'pipeline') {
    return `pipeline ${item.pipeline_name ?? item.pipeline_id ?? ''} · ${models}`;
  }
  return `${item.model ?? 'a model'} · ${item.route ?? 'call'}`;
}

/** The latest calls and runs of the account (usage needs usage:read). */
function RecentActivityCard() {
  const { hasScope } = useAuth();
  const usage = useQuery({ ...queries.usage(), enabled: hasScope('usage:read') });
  return (
    <Card withBorder>
      <Title order={3} size="h4" mb="xs">
        Recent activity
      </Title>
      {!hasScope('usage:read') && (
        <Text size="sm">Recent activity needs a key with usage:read (or admin).</Text>
      )}
      <ErrorAlert error={usage.error} />
      {usage.data && usage.data.recent_activity.length === 0 && <Text size="sm">Nothing yet.</Text>}
      {usage.data && usage.data.recent_activity.length > 0 && (
        <Table.ScrollContainer minWidth={600}>
          <Table>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>When</Table.Th>
                <Table.Th>What</Table.Th>
                <Table.Th>Status</Table.Th>
                <Table.Th>Tokens</Table.Th>
                <Table.Th>Spend</Table.Th>
                <Table.Th>Model time</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {usage.data.recent_activity.map((item) => (
                <Table.Tr key={item.id}>
                  <Table.Td>{formatDate(item.created_at)}</Table.Td>
                  <Table.Td>{activityText(item)}</Table.Td>
                  <Table.Td>{item.status}</Table.Td>
                  <Table.Td>{item.total_tokens}</Table.Td>
                  <Table.Td>
                    {item.cost_usd === null ? 'unpriced' : formatUsd(item.cost_usd)}
                  </Table.Td>
                  <Table.Td>{item.latency_ms === null ? '—' : `${item.latency_ms} ms`}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      )}
    </Card>
  );
}

export default function OverviewPage() {
  return (
    <Page title="Overview">
      <SimpleGrid cols={{ base: 1, md: 2 }}>
        <HealthCard />
        <FeaturesCard />
      </SimpleGrid>
      <ModelsCard />
      <RecentActivityCard />
    </Page>
  );
}
