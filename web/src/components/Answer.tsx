// An answer rendered through POST /v1/layout (its components: text, heading, list, steps, code,
// table, chart, callout, quote, sources), or as plain Markdown while that endpoint does not exist.
import { Alert, Blockquote, Code, List, Stack, Table, Text, Title, Anchor } from '@mantine/core';
import { lazy, Suspense, useEffect, useState } from 'react';
import Markdown from 'react-markdown';
import remarkGfm from 'remark-gfm';
import { callJson, ApiCallError } from '../api/client';

const LayoutChart = lazy(() => import('./LayoutChart'));

export interface LayoutComponent {
  type: string;
  id: string;
  config: Record<string, unknown>;
}

type LayoutState =
  { kind: 'pending' } | { kind: 'markdown' } | { kind: 'layout'; components: LayoutComponent[] };

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function text(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return String(value);
  if (isRecord(value) && typeof value.text === 'string') return value.text;
  return '';
}

function items(config: Record<string, unknown>): unknown[] {
  for (const key of ['items', 'steps', 'sources']) {
    const value = config[key];
    if (Array.isArray(value)) return value;
  }
  return [];
}

/** Reads `{success, layout: {components}}`; anything else means the layout cannot be used. */
export function componentsOf(data: unknown): LayoutComponent[] | null {
  if (!isRecord(data) || !isRecord(data.layout) || !Array.isArray(data.layout.components))
    return null;
  const components: LayoutComponent[] = [];
  for (const component of data.layout.components) {
    if (!isRecord(component) || typeof component.type !== 'string') return null;
    components.push({
      type: component.type,
      id: typeof component.id === 'string' ? component.id : String(components.length),
      config: isRecord(component.config) ? component.config : {},
    });
  }
  return components;
}

function MarkdownAnswer({ content }: { content: string }) {
  return (
    <div className="answer-markdown">
      <Markdown remarkPlugins={[remarkGfm]}>{content}</Markdown>
    </div>
  );
}

function LayoutPart({ component }: { component: LayoutComponent }) {
  const { config } = component;
  switch (component.type) {
    case 'heading': {
      const level =
        typeof config.level === 'number' ? Math.min(6, Math.max(3, config.level + 2)) : 4;
      return <Title order={level as 3 | 4 | 5 | 6}>{text(config.text ?? config.content)}</Title>;
    }
    case 'text':
      return <MarkdownAnswer content={text(config.text ?? config.content ?? config.markdown)} />;
    case 'list':
    case 'steps':
      return (
        <List
          type={component.type === 'steps' || config.ordered === true ? 'ordered' : 'unordered'}
        >
          {items(config).map((item, index) => (
            <List.Item key={index}>{text(item)}</List.Item>
          ))}
        </List>
      );
    case 'code':
      return (
        <Code
          block
          aria-label={`Code${typeof config.language === 'string' ? ` (${config.language})` : ''}`}
        >
          {text(config.code ?? config.content)}
        </Code>
      );
    case 'table': {
      const columns = Array.isArray(config.columns) ? config.columns.map(text) : [];
      const rows = Array.isArray(config.rows) ? config.rows : [];
      return (
        <Table withTableBorder withColumnBorders>
          <Table.Thead>
            <Table.Tr>
              {columns.map((column, index) => (
                <Table.Th key={index}>{column}</Table.Th>
              ))}
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {rows.map((row, rowIndex) => (
              <Table.Tr key={rowIndex}>
                {(Array.isArray(row)
                  ? row
                  : isRecord(row)
                    ? columns.map((column) => row[column])
                    : []
                ).map((cell, cellIndex) => (
                  <Table.Td key={cellIndex}>{text(cell)}</Table.Td>
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
          <LayoutChart config={config} />
        </Suspense>
      );
    case 'callout':
      return (
        <Alert
          color={config.tone === 'warning' ? 'orange' : 'blue'}
          title={text(config.title) || undefined}
        >
          {text(config.text ?? config.content)}
        </Alert>
      );
    case 'quote':
      return (
        <Blockquote cite={text(config.cite ?? config.source) || undefined}>
          {text(config.text ?? config.content)}
        </Blockquote>
      );
    case 'sources':
      return (
        <List size="sm">
          {items(config).map((item, index) => {
            const url = isRecord(item) && typeof item.url === 'string' ? item.url : null;
            const title = isRecord(item) ? text(item.title) || url || '' : text(item);
            return (
              <List.Item key={index}>
                {url === null ? (
                  title
                ) : (
                  <Anchor href={url} target="_blank" rel="noreferrer">
                    {title}
                  </Anchor>
                )}
              </List.Item>
            );
          })}
        </List>
      );
    default:
      return <MarkdownAnswer content={text(config.text ?? config.content)} />;
  }
}

export function Answer({ content, final }: { content: string; final: boolean }) {
  const [state, setState] = useState<LayoutState>({ kind: 'pending' });

  useEffect(() => {
    if (!final) return;
    let cancelled = false;
    callJson('POST', '/v1/layout', { message: content })
      .then(({ data }) => {
        const components = componentsOf(data);
        if (!cancelled)
          setState(components === null ? { kind: 'markdown' } : { kind: 'layout', components });
      })
      .catch((error: unknown) => {
        // 404: the layout engine is not in this build; any other failure: the text is still shown.
        if (!cancelled) setState({ kind: 'markdown' });
        if (!(error instanceof ApiCallError)) console.warn('layout failed', error);
      });
    return () => {
      cancelled = true;
    };
  }, [content, final]);

  if (!final || state.kind !== 'layout') return <MarkdownAnswer content={content} />;
  return (
    <Stack gap="xs" data-layout="components">
      {state.components.map((component) => (
        <LayoutPart key={component.id} component={component} />
      ))}
    </Stack>
  );
}
