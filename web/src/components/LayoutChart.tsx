// A layout's chart component (schema LayoutComponentChart), drawn with Recharts; loaded on demand.
import type { components } from '../api/client';
import {
  Bar,
  BarChart,
  CartesianGrid,
  Legend,
  Line,
  LineChart,
  ResponsiveContainer,
  Tooltip,
  XAxis,
  YAxis,
} from 'recharts';

const palette = ['#1971c2', '#e8590c', '#2f9e44', '#9c36b5', '#c92a2a'];

type ChartConfig = components['schemas']['LayoutComponentChart']['config'];

export default function LayoutChart({ config }: { config: ChartConfig }) {
  const { labels, datasets } = config;
  const rows = labels.map((label, index) => {
    const row: Record<string, string | number | null> = { label };
    for (const dataset of datasets) row[dataset.label] = dataset.data[index] ?? null;
    return row;
  });
  const names = datasets.map((dataset) => dataset.label);
  const Chart = config.chart_type === 'line' ? LineChart : BarChart;
  return (
    <div
      role="img"
      aria-label={`Chart of ${names.join(', ')} over ${labels.join(', ')}`}
      style={{ width: '100%', height: 260 }}
    >
      <ResponsiveContainer>
        <Chart data={rows}>
          <CartesianGrid strokeDasharray="3 3" />
          <XAxis dataKey="label" />
          <YAxis />
          <Tooltip />
          <Legend />
          {names.map((name, index) =>
            Chart === LineChart ? (
              <Line key={name} dataKey={name} stroke={palette[index % palette.length]} />
            ) : (
              <Bar key={name} dataKey={name} fill={palette[index % palette.length]} />
            ),
          )}
        </Chart>
      </ResponsiveContainer>
    </div>
  );
}
