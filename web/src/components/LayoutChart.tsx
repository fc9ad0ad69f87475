// A layout's chart component ({labels, datasets[{label, data}]}), drawn with Recharts; loaded on demand.
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

export default function LayoutChart({ config }: { config: Record<string, unknown> }) {
  const labels = Array.isArray(config.labels) ? config.labels.map(String) : [];
  const datasets = Array.isArray(config.datasets)
    ? config.datasets.filter(
        (dataset): dataset is { label?: unknown; data: unknown[] } =>
          typeof dataset === 'object' &&
          dataset !== null &&
          Array.isArray((dataset as { data?: unknown }).data),
      )
    : [];
  const rows = labels.map((label, index) => {
    const row: Record<string, string | number> = { label };
    datasets.forEach((dataset, position) => {
      row[typeof dataset.label === 'string' ? dataset.label : `series ${position + 1}`] = Number(
        dataset.data[index] ?? 0,
      );
    });
    return row;
  });
  const names = datasets.map((dataset, position) =>
    typeof dataset.label === 'string' ? dataset.label : `series ${position + 1}`,
  );
  const Chart = config.chart_type === 'line' || config.type === 'line' ? LineChart : BarChart;
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
