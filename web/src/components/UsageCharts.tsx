// Usage over time per key, per model and per end user, as line charts (Recharts); loaded on demand.
import { Card, SimpleGrid, Title } from '@mantine/core';
import {
  CartesianGrid,
  Legend,
  Line,
  LineChart,
  ResponsiveContainer,
  Tooltip,
  XAxis,
  YAxis,
} from 'recharts';
import type { paths } from '../api/client';

type Usage = paths['/v1/usage']['get']['responses'][200]['content']['application/json'];
type Metric = 'cost_usd' | 'requests' | 'total_tokens' | 'average_latency_ms';

const palette = [
  '#1971c2',
  '#e8590c',
  '#2f9e44',
  '#9c36b5',
  '#c92a2a',
  '#0c8599',
  '#5f3dc4',
  '#862e9c',
];

function rowsOf(usage: Usage, groups: { name: string; points: Usage['points'] }[], metric: Metric) {
  const label = (start: string) =>
    usage.bucket === 'hour'
      ? new Date(start).toLocaleString([], { month: 'short', day: 'numeric', hour: '2-digit' })
      : new Date(start).toLocaleDateString([], { month: 'short', day: 'numeric' });
  return usage.buckets.map((start) => {
    const row: Record<string, string | number | null> = { label: label(start) };
    for (const group of groups) {
      const point = group.points.find((item) => item.start === start);
      row[group.name] =
        point === undefined ? (metric === 'average_latency_ms' ? null : 0) : point[metric];
    }
    return row;
  });
}

function Chart({
  title,
  usage,
  groups,
  metric,
}: {
  title: string;
  usage: Usage;
  groups: { name: string; points: Usage['points'] }[];
  metric: Metric;
}) {
  const rows = rowsOf(usage, groups, metric);
  return (
    <Card
      withBorder
      component="figure"
      m={0}
      aria-label={`${title}: ${metric === 'cost_usd' ? 'spend in US dollars' : metric.replaceAll('_', ' ')} over time`}
    >
      <Title order={3} size="h5" mb="xs" component="figcaption">
        {title}
      </Title>
      <div style={{ width: '100%', height: 260 }}>
        <ResponsiveContainer>
          <LineChart data={rows}>
            <CartesianGrid strokeDasharray="3 3" />
            <XAxis dataKey="label" minTickGap={24} />
            <YAxis />
            <Tooltip />
            <Legend />
            {groups.map((group, index) => (
              <Line
                key={group.name}
                type="monotone"
                dataKey={group.name}
                stroke={palette[index % palette.length]}
                dot={false}
                connectNulls
              />
            ))}
          </LineChart>
        </ResponsiveContainer>
      </div>
    </Card>
  );
}

export default function UsageCharts({ usage, metric }: { usage: Usage; metric: Metric }) {
  const byKey = usage.by_key
    .slice(0, 8)
    .map((group) => ({ name: group.name ?? group.key_id ?? 'unattributed', points: group.points }));
  const byModel = usage.by_model
    .slice(0, 8)
    .map((group) => ({ name: group.model ?? 'unknown', points: group.points }));
  const byUser = usage.groups
    .slice(0, 8)
    .map((group) => ({ name: group.user ?? 'none given', points: group.points }));
  return (
    <SimpleGrid cols={{ base: 1, lg: 3 }} data-testid="usage-charts">
      <Chart title="Per key" usage={usage} groups={byKey} metric={metric} />
      <Chart title="Per model" usage={usage} groups={byModel} metric={metric} />
      <Chart title="Per end user" usage={usage} groups={byUser} metric={metric} />
    </SimpleGrid>
  );
}
