// An answer rendered through POST /v1/layout (its components: text, heading, list, steps, code,
// table, chart, callout, quote, math, sources, divider, image), typed from the OpenAPI document;
// plain Markdown while the answer streams, and when the layout cannot be had (feature off, error).
import {
  Alert,
  Anchor,
  Blockquote,
  Code,
  Divider,
  Image,
  List,
  Stack,
  Table,
  Text,
  Title,
} from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { lazy, Suspense } from 'react';
import Markdown from 'react-markdown';
import remarkGfm from 'remark-gfm';
import { api, unwrap, type paths } from '../api/client';

const LayoutChart = lazy(() => import('./LayoutChart'));

type LayoutResponse = paths['/v1/layout']['post']['responses'][200]['content']['application/json'];
export type LayoutComponent = LayoutResponse['layout']['components'][number];

function MarkdownAnswer({ content }: { content: string }) {
  return (
    <div className="answer-markdown">
      <Markdown remarkPlugins={[remarkGfm]}>{content}</Markdown>
    </div>
  );
}

const calloutColours = {
  note: 'blue',
  tip: 'green',
  important: 'violet',
  warning: 'orange',
  caution: 'red',
} as const;

/** One component of the layout, drawn from its published schema (`LayoutComponent*`). */
function LayoutPart({ component }: { component: LayoutComponent }) {
  switch (component.type) {
    case 'heading': {
      const level = Math.min(6, Math.max(3, component.config.level + 2)) as 3 | 4 | 5 | 6;
      return <Title order={level}>{component.config.text}</Title>;
    }
    case 'text':
      return <MarkdownAnswer content={component.config.markdown} />;
    case 'list':
      return (
        <List>
          {component.config.items.map((item, index) => (
            <List.Item key={index}>
              {item.checked === null ? '' : item.checked ? '☑ ' : '☐ '}
              <InlineMarkdown content={item.markdown} />
              {item.children.length > 0 && (
                <List withPadding>
                  {item.children.map((child, childIndex) => (
                    <List.Item key={childIndex}>{child}</List.Item>
                  ))}
                </List>
              )}
            </List.Item>
          ))}
        </List>
      );
    case 'steps':
      return (
        <List type="ordered">
          {component.config.steps.map((step) => (
            <List.Item key={step.number}>
              <InlineMarkdown content={step.markdown} />
            </List.Item>
          ))}
        </List>
      );
    case 'code':
      return (
        <Code block aria-label={`Code (${component.config.language})`}>
          {component.config.code}
        </Code>
      );
    case 'table': {
      const { columns, rows } = component.config;
      return (
        <Table withTableBorder withColumnBorders>
          <Table.Thead>
            <Table.Tr>
              {columns.map((column) => (
                <Table.Th key={column.key} style={{ textAlign: column.align ?? undefined }}>
                  {column.label}
                </Table.Th>
              ))}
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {rows.map((row, rowIndex) => (
              <Table.Tr key={rowIndex}>
                {columns.map((column, cellIndex) => (
                  <Table.Td
                    key={column.key}
                    style={{ textAlign: column.align ?? (column.numeric ? 'right' : undefined) }}
                  >
                    {row[cellIndex] === null ? '' : String(row[cellIndex])}
                  </Table.Td>
                ))}
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      );
    }
    case 'chart':
      return (
        <Suspense fallback={<Text size="sm">Loading the chart…</Text>}>
          <LayoutChart config={component.config} />
        </Suspense>
      );
    case 'callout':
      return (
        <Alert
          color={calloutColours[component.config.variant]}
          title={component.config.variant[0]!.toUpperCase() + component.config.variant.slice(1)}
        >
          <MarkdownAnswer content={component.config.markdown} />
        </Alert>
      );
    case 'quote':
      return (
        <Blockquote cite={component.config.attribution ?? undefined}>
          {component.config.text}
        </Blockquote>
      );
    case 'math':
      return (
        <Code block aria-label="Formula">
          {component.config.expression}
        </Code>
      );
    case 'sources':
      return (
        <List size="sm" aria-label="Sources">
          {component.config.items.map((item, index) => (
            <List.Item key={index}>
              <Anchor href={item.url} target="_blank" rel="noreferrer">
                {item.title || item.url}
              </Anchor>
            </List.Item>
          ))}
        </List>
      );
    case 'divider':
      return <Divider />;
    case 'image':
      return <Image src={component.config.url} alt={component.config.alt} maw={480} />;
  }
}

function InlineMarkdown({ content }: { content: string }) {
  return (
    <Markdown remarkPlugins={[remarkGfm]} components={{ p: ({ children }) => <>{children}</> }}>
      {content}
    </Markdown>
  );
}

export function Answer({ content, final }: { content: string; final: boolean }) {
  // The same text always lays out the same way: one request per answer text, however often shown.
  const layout = useQuery({
    queryKey: ['layout', content],
    queryFn: async () =>
      unwrap(await api.POST('/v1/layout', { body: { message: content } })).layout.components,
    enabled: final,
    staleTime: Infinity,
    retry: false,
  });

  // While the answer streams, and when the layout cannot be had (feature off, any failure): Markdown.
  if (!final || layout.data === undefined) return <MarkdownAnswer content={content} />;
  return (
    <Stack gap="xs" data-layout="components">
      {layout.data.map((component) => (
        <LayoutPart key={component.id} component={component} />
      ))}
    </Stack>
  );
}
