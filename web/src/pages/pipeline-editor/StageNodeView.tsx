// One stage on the canvas: its name, agent, input and output mappings, its run status, and the
// save-time error that names it.
import { Badge, Button, Card, Group, Select, Stack, Text, TextInput } from '@mantine/core';
import { Handle, Position, type NodeProps } from '@xyflow/react';
import { createContext, useContext } from 'react';
import type { StageData, StageNode } from './stages';

interface EditorContextValue {
  agents: { value: string; label: string; type: string }[];
  update(id: string, patch: Partial<StageData>): void;
  remove(id: string): void;
}

/** What the nodes need from the editor (React Flow renders them, so not through props). */
export const EditorContext = createContext<EditorContextValue | null>(null);

function MappingRows({
  label,
  rows,
  onChange,
  nodeName,
}: {
  label: string;
  rows: [string, string][];
  onChange: (rows: [string, string][]) => void;
  nodeName: string;
}) {
  return (
    <Stack gap={4}>
      <Text size="xs" fw={600}>
        {label}
      </Text>
      {rows.map(([key, path], index) => (
        <Group key={index} gap={4} wrap="nowrap">
          <TextInput
            className="nodrag"
            size="xs"
            w={90}
            aria-label={`${label} name ${index + 1} of ${nodeName}`}
            value={key}
            onChange={(event) => {
              const next = [...rows];
              next[index] = [event.currentTarget.value, path];
              onChange(next);
            }}
          />
          <TextInput
            className="nodrag"
            size="xs"
            w={190}
            aria-label={`${label} path ${index + 1} of ${nodeName}`}
            value={path}
            onChange={(event) => {
              const next = [...rows];
              next[index] = [key, event.currentTarget.value];
              onChange(next);
            }}
          />
          <Button
            className="nodrag"
            size="compact-xs"
            variant="subtle"
            aria-label={`Remove ${label} ${key || index + 1} of ${nodeName}`}
            onClick={() => onChange(rows.filter((_, position) => position !== index))}
          >
            ✕
          </Button>
        </Group>
      ))}
      <Button
        className="nodrag"
        size="compact-xs"
        variant="default"
        onClick={() => onChange([...rows, ['', '']])}
        aria-label={`Add ${label} to ${nodeName}`}
      >
        + mapping
      </Button>
    </Stack>
  );
}

const statusColors = new Map([
  ['completed', 'teal.9'],
  ['failed', 'red.9'],
  ['running', 'blue.9'],
]);

export function StageNodeView({ id, data }: NodeProps<StageNode>) {
  const context = useContext(EditorContext);
  if (context === null) return null;
  const statusColor = statusColors.get(data.status ?? '') ?? 'gray.8';
  return (
    <>
      <Handle type="target" position={Position.Left} />
      <Card
        withBorder
        shadow="sm"
        p="xs"
        w={340}
        data-testid={`stage-node-${data.name}`}
        data-status={data.status ?? 'idle'}
        style={
          data.error === null
            ? undefined
            : { borderColor: 'var(--mantine-color-red-8)', borderWidth: 2 }
        }
        role="group"
        aria-label={`Stage ${data.name}`}
      >
        <Stack gap={6}>
          <Group justify="space-between" wrap="nowrap">
            <TextInput
              className="nodrag"
              size="xs"
              aria-label="Stage name"
              value={data.name}
              onChange={(event) => context.update(id, { name: event.currentTarget.value })}
            />
            {data.status && (
              <Badge color={statusColor} variant="filled" data-testid="stage-status">
                {data.status}
              </Badge>
            )}
            <Button
              className="nodrag"
              size="compact-xs"
              variant="subtle"
              color="red.9"
              onClick={() => context.remove(id)}
              aria-label={`Delete stage ${data.name}`}
            >
              ✕
            </Button>
          </Group>
          <Select
            className="nodrag"
            size="xs"
            label="Agent"
            placeholder="Pick an agent"
            data={context.agents.map(({ value, label }) => ({ value, label }))}
            value={data.agentId}
            onChange={(value) => context.update(id, { agentId: value })}
          />
          <MappingRows
            label="Input mapping"
            nodeName={data.name}
            rows={data.inputMapping}
            onChange={(rows) => context.update(id, { inputMapping: rows })}
          />
          <MappingRows
            label="Output mapping"
            nodeName={data.name}
            rows={data.outputMapping}
            onChange={(rows) => context.update(id, { outputMapping: rows })}
          />
          {data.error && (
            <Text size="xs" c="red" role="alert" data-testid="stage-error">
              {data.error}
            </Text>
          )}
        </Stack>
      </Card>
      <Handle type="source" position={Position.Right} />
    </>
  );
}
