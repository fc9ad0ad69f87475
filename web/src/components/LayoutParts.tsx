// The components of a laid-out answer (POST /v1/layout), one view per kind, each drawn from its
// published schema (`LayoutComponent*`) and picked from a table by the component's type.
import {
  Alert,
  Anchor,
  Blockquote,
  Code,
  Divider,
  Image,
  List,
  Table,
  Text,
  Title,
} from '@mantine/core';
import { lazy, Suspense, type ReactNode } from 'react';
import Markdown from 'react-markdown';
import remarkGfm from 'remark-gfm';
import type { paths } from '../api/client';

const LayoutChart = lazy(() => import('./LayoutChart'));

type LayoutResponse = paths['/v1/layout']['post']['responses'][200]['content']['application/json'];
export type LayoutComponent = LayoutResponse['layout']['components'][number];
type PartType = LayoutComponent['type'];
type ConfigOf<T extends PartType> = Extract<LayoutComponent, { type: T }>['config'];
type PartView<T extends PartType> = (props: { config: ConfigOf<T> }) => ReactNode;

export function MarkdownAnswer({ content }: { content: string }) {
  return (
    <div className="answer-markdown">
      <Markdown remarkPlugins={[remarkGfm]}>{content}</Markdown>
    </div>
  );
}

function InlineMarkdown({ content }: { content: string }) {
  return (
    <Markdown remarkPlugins={[remarkGfm]} components={{ p: ({ children }) => <>{children}</> }}>
      {content}
    </Markdown>
  );
}

const calloutColours = {
  note: 'blue',
  tip: 'green',
  important: 'violet',
  warning: 'orange',
  caution: 'red',
} as const;

const HeadingPart: PartView<'heading'> = ({ config }) => {
  const level = Math.min(6, Math.max(3, config.level + 2)) as 3 | 4 | 5 | 6;
  return <Title order={level}>{config.text}</Title>;
};

const ListPart: PartView<'list'> = ({ config }) => (
  <List>
    {config.items.map((item, index) => (
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

const StepsPart: PartView<'steps'> = ({ config }) => (
  <List type="ordered">
    {config.steps.map((step) => (
      <List.Item key={step.number}>
        <InlineMarkdown content={step.markdown} />
      </List.Item>
    ))}
  </List>
);

const TablePart: PartView<'table'> = ({ config: { columns, rows } }) => (
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

const CalloutPart: PartView<'callout'> = ({ config }) => (
  <Alert
    color={calloutColours[config.variant]}
    title={config.variant[0]!.toUpperCase() + config.variant.slice(1)}
  >
    <MarkdownAnswer content={config.markdown} />
  </Alert>
);

const SourcesPart: PartView<'sources'> = ({ config }) => (
  <List size="sm" aria-label="Sources">
    {config.items.map((item, index) => (
      <List.Item key={index}>
        <Anchor href={item.url} target="_blank" rel="noreferrer">
          {item.title || item.url}
        </Anchor>
      </List.Item>
    ))}
  </List>
);

/** The view of each kind of component. */
const parts: { [T in PartType]: PartView<T> } = {
  heading: HeadingPart,
  text: ({ config }) => <MarkdownAnswer content={config.markdown} />,
  list: ListPart,
  steps: StepsPart,
  code: ({ config }) => (
    <Code block aria-label={`Code (${config.language})`}>
      {config.code}
    </Code>
  ),
  table: TablePart,
  chart: ({ config }) => (
    <Suspense fallback={<Text size="sm">Loading the chart…</Text>}>
      <LayoutChart config={config} />
    </Suspense>
  ),
  callout: CalloutPart,
  quote: ({ config }) => (
    <Blockquote cite={config.attribution ?? undefined}>{config.text}</Blockquote>
  ),
  math: ({ config }) => (
    <Code block aria-label="Formula">
      {config.expression}
    </Code>
  ),
  sources: SourcesPart,
  divider: () => <Divider />,
  image: ({ config }) => <Image src={config.url} alt={config.alt} maw={480} />,
};

/** One component of the layout, drawn by the view of its kind. */
export function LayoutPart({ component }: { component: LayoutComponent }) {
  // The table pairs each kind with its view, so the component's config is the one its view takes.
  const Part = parts[component.type] as PartView<PartType>;
  return <Part config={component.config} />;
}
