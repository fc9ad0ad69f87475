// Usage: spend, requests, tokens and model time over time, per key, per model and per end user
// (charts load on demand), read from the usage ledger; and the account's budgets.
import {
  Button,
  Card,
  Group,
  SegmentedControl,
  Select,
  SimpleGrid,
  Stack,
  Table,
  Text,
  Title,
} from '@mantine/core';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { lazy, Suspense, useState } from 'react';
import type { paths } from '../api/client';
import { queries } from '../api/queries';
import { ErrorAlert, Page } from '../components/common';
import { BudgetsSection } from './usage/BudgetsSection';
import { formatUsd } from './usage/money';

const UsageCharts = lazy(() => import('../components/UsageCharts'));

type UsageTotals =
  paths['/v1/usage']['get']['responses'][200]['content']['application/json']['totals'];

/** Spend in dollars, noting the calls whose price is unknown (not in the sum). */
function spendText(totals: UsageTotals): string {
  const unpriced = totals.unpriced_requests;
  return unpriced === 0
    ? formatUsd(totals.cost_usd)
    : `${formatUsd(totals.cost_usd)} + ${unpriced} unpriced`;
}

/** One grouping of the usage (by key, model, user) as a table: spend, requests, tokens, latency. */
function UsageTable({
  id,
  title,
  column,
  rows,
}: {
  id: string;
  title: string;
  column: string;
  rows: { key: string; label: string; totals: UsageTotals }[];
}) {
  return (
    <Card withBorder component="section" aria-labelledby={`${id}-title`}>
      <Title order={3} size="h4" id={`${id}-title`} mb="xs">
        {title}
      </Title>
      <Table>
        <Table.Thead>
          <Table.Tr>
            <Table.Th>{column}</Table.Th>
            <Table.Th>Spend</Table.Th>
            <Table.Th>Requests</Table.Th>
            <Table.Th>Tokens</Table.Th>
            <Table.Th>Latency</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {rows.map((row) => (
            <Table.Tr key={row.key}>
              <Table.Td>{row.label}</Table.Td>
              <Table.Td>{spendText(row.totals)}</Table.Td>
              <Table.Td>{row.totals.requests}</Table.Td>
              <Table.Td>{row.totals.total_tokens}</Table.Td>
              <Table.Td>
                {row.totals.average_latency_ms === null
                  ? '—'
                  : `${Math.round(row.totals.average_latency_ms)} ms`}
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Card>
  );
}

const ranges = { '24h': 86_400_000, '7d': 7 * 86_400_000, '30d': 30 * 86_400_000 } as const;

type Range = keyof typeof ranges;

/** The export of the range's records (and the key's only, when one is chosen), as CSV. */
function exportHref(range: Range, keyId: string | null): string {
  const query = new URLSearchParams({ from: new Date(Date.now() - ranges[range]).toISOString() });
  if (keyId !== null) query.set('key_id', keyId);
  return `/v1/usage/export?${query.toString()}`;
}
type Metric = 'cost_usd' | 'requests' | 'total_tokens' | 'average_latency_ms';

/** The period, the metric the charts show, and one key or all. */
function Filters(props: {
  range: Range;
  onRange: (range: Range) => void;
  metric: Metric;
  onMetric: (metric: Metric) => void;
  keyId: string | null;
  onKey: (keyId: string | null) => void;
}) {
  const { range, onRange, metric, onMetric, keyId, onKey } = props;
  const keys = useQuery(queries.apiKeys({ limit: 100, offset: 0 }));
  return (
    <Card withBorder>
      <Group align="flex-end">
        <Stack gap={4}>
          <Text size="sm" fw={500} id="range-label">
            Range
          </Text>
          <SegmentedControl
            aria-labelledby="range-label"
            value={range}
            onChange={(value) => onRange(value as Range)}
            data={Object.keys(ranges)}
          />
        </Stack>
        <Stack gap={4}>
          <Text size="sm" fw={500} id="metric-label">
            Metric
          </Text>
          <SegmentedControl
            aria-labelledby="metric-label"
            value={metric}
            onChange={onMetric}
            data={[
              { value: 'cost_usd', label: 'Spend' },
              { value: 'requests', label: 'Requests' },
              { value: 'total_tokens', label: 'Tokens' },
              { value: 'average_latency_ms', label: 'Latency' },
            ]}
          />
        </Stack>
        <Select
          label="Key"
          placeholder="all keys"
          clearable
          data={(keys.data?.api_keys ?? []).map((key) => ({
            value: key.id,
            label: `${key.name} (${key.display_key})`,
          }))}
          value={keyId}
          onChange={onKey}
        />
        <Button component="a" variant="default" href={exportHref(range, keyId)} download>
          Download CSV
        </Button>
      </Group>
    </Card>
  );
}

function TotalsGrid({ totals }: { totals: UsageTotals }) {
  return (
    <SimpleGrid cols={{ base: 2, md: 5 }}>
      <Card withBorder>
        <Text size="sm">Spend</Text>
        <Text fw={700} size="xl" data-testid="usage-spend">
          {spendText(totals)}
        </Text>
      </Card>
      <Card withBorder>
        <Text size="sm">Requests</Text>
        <Text fw={700} size="xl" data-testid="usage-requests">
          {totals.requests}
        </Text>
      </Card>
      <Card withBorder>
        <Text size="sm">Tokens</Text>
        <Text fw={700} size="xl">
          {totals.total_tokens}
        </Text>
      </Card>
      <Card withBorder>
        <Text size="sm">Average model time</Text>
        <Text fw={700} size="xl">
          {totals.average_latency_ms === null ? '—' : `${Math.round(totals.average_latency_ms)} ms`}
        </Text>
      </Card>
      <Card withBorder>
        <Text size="sm">Failed calls</Text>
        <Text fw={700} size="xl">
          {totals.failed}
        </Text>
      </Card>
    </SimpleGrid>
  );
}

export default function UsagePage() {
  const [range, setRange] = useState<Range>('7d');
  const [metric, setMetric] = useState<Metric>('cost_usd');
  const [keyId, setKeyId] = useState<string | null>(null);
  const usage = useQuery({
    ...queries.usage({ sinceMs: ranges[range], keyId, groupBy: ['user'] }),
    placeholderData: keepPreviousData,
  });
  const totals = usage.data?.totals;
  return (
    <Page title="Usage">
      <Filters
        range={range}
        onRange={setRange}
        metric={metric}
        onMetric={setMetric}
        keyId={keyId}
        onKey={setKeyId}
      />
      <ErrorAlert error={usage.error} />
      {totals && <TotalsGrid totals={totals} />}
      {usage.data && (
        <Suspense fallback={<Text size="sm">Loading the charts…</Text>}>
          <UsageCharts usage={usage.data} metric={metric} />
        </Suspense>
      )}
      {usage.data && (
        <SimpleGrid cols={{ base: 1, md: 2 }}>
          <UsageTable
            id="by-key"
            title="By key"
            column="Key"
            rows={usage.data.by_key.map((group) => ({
              key: group.key_id ?? 'none',
              label: group.name ?? group.key_id ?? 'unattributed',
              totals: group.totals,
            }))}
          />
          <UsageTable
            id="by-model"
            title="By model"
            column="Model"
            rows={usage.data.by_model.map((group) => ({
              key: group.model ?? 'none',
              label: group.model ?? 'unknown',
              totals: group.totals,
            }))}
          />
          <UsageTable
            id="by-user"
            title="By end user"
            column="End user"
            rows={usage.data.groups.map((group) => ({
              key: group.user ?? 'none',
              label: group.user ?? 'none given',
              totals: group.totals,
            }))}
          />
        </SimpleGrid>
      )}
      <BudgetsSection />
    </Page>
  );
}
