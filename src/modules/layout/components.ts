// The allow-listed layout components: each type's `config` schema (published in the OpenAPI
// document) and its TypeScript shape. A layout is a flat list of these, in reading order.
import Type, { type Static, type TSchema } from 'typebox';

const Text = (description: string) => Type.String({ description });

export const componentConfigSchemas = {
  heading: Type.Object({
    text: Text('Plain text of the heading.'),
    level: Type.Integer({ minimum: 1, maximum: 6 }),
  }),
  text: Type.Object({
    markdown: Text('The paragraph as inline Markdown (emphasis, links, inline code, inline math).'),
    text: Text('The same as plain text.'),
  }),
  list: Type.Object({
    items: Type.Array(
      Type.Object({
        text: Text('Plain text of the item.'),
        markdown: Text('The item as inline Markdown.'),
        checked: Type.Union([Type.Boolean(), Type.Null()], {
          description: 'For task-list items, whether ticked; null otherwise.',
        }),
        children: Type.Array(Type.String(), { description: 'Nested items, as plain text.' }),
      }),
    ),
  }),
  steps: Type.Object({
    steps: Type.Array(
      Type.Object({
        number: Type.Integer(),
        text: Text('Plain text of the step.'),
        markdown: Text('The step as inline Markdown.'),
      }),
    ),
  }),
  code: Type.Object({
    language: Text('The fence’s language (`text` when none was given).'),
    code: Text('The code, verbatim.'),
    lines: Type.Integer(),
  }),
  table: Type.Object({
    columns: Type.Array(
      Type.Object({
        key: Text('Stable column key (c0, c1, …).'),
        label: Text('Header text.'),
        align: Type.Union([
          Type.Literal('left'),
          Type.Literal('center'),
          Type.Literal('right'),
          Type.Null(),
        ]),
        numeric: Type.Boolean({ description: 'Every non-empty cell is a number.' }),
      }),
    ),
    rows: Type.Array(
      Type.Array(Type.Union([Type.String(), Type.Number(), Type.Null()]), {
        description: 'Cells in column order: numbers where the column is numeric.',
      }),
    ),
  }),
  chart: Type.Object({
    chart_type: Type.Union([Type.Literal('bar'), Type.Literal('line')], {
      description: '`line` when the labels are a time series (years, months, quarters, dates).',
    }),
    labels: Type.Array(Type.String()),
    datasets: Type.Array(
      Type.Object({
        label: Type.String(),
        data: Type.Array(Type.Union([Type.Number(), Type.Null()])),
      }),
    ),
    source: Type.Union([Type.String(), Type.Null()], {
      description: 'The id of the table or list the numbers come from.',
    }),
  }),
  callout: Type.Object({
    variant: Type.Union([
      Type.Literal('note'),
      Type.Literal('tip'),
      Type.Literal('important'),
      Type.Literal('warning'),
      Type.Literal('caution'),
    ]),
    text: Text('Plain text of the callout.'),
    markdown: Text('The callout as Markdown.'),
  }),
  quote: Type.Object({
    text: Text('Plain text of the quotation.'),
    attribution: Type.Union([Type.String(), Type.Null()], {
      description: 'Who said it, from a closing "— Name" line.',
    }),
  }),
  math: Type.Object({
    expression: Text('TeX source of a displayed formula.'),
    display: Type.Boolean(),
  }),
  sources: Type.Object({
    items: Type.Array(Type.Object({ title: Type.String(), url: Type.String() })),
  }),
  divider: Type.Object({}),
  image: Type.Object({ url: Type.String(), alt: Type.String() }),
} satisfies Record<string, TSchema>;

export type ComponentType = keyof typeof componentConfigSchemas;
export const componentTypes = Object.keys(componentConfigSchemas) as ComponentType[];

export type ComponentConfig<T extends ComponentType> = Static<(typeof componentConfigSchemas)[T]>;

export type LayoutComponent = {
  [T in ComponentType]: { type: T; id: string; config: ComponentConfig<T> };
}[ComponentType];

/** OpenAPI component name of a layout component type (`LayoutComponentHeading`, …). */
export function componentSchemaId(type: ComponentType): string {
  return `LayoutComponent${type[0]!.toUpperCase()}${type.slice(1)}`;
}

/** Each component's full schema: `{type, id, config}`. */
export function componentSchemas(): { type: ComponentType; schema: TSchema }[] {
  return componentTypes.map((type) => ({
    type,
    schema: Type.Object(
      {
        type: Type.Literal(type),
        id: Type.String({ description: 'Stable id: the same content gives the same id.' }),
        config: componentConfigSchemas[type],
      },
      { $id: componentSchemaId(type), title: componentSchemaId(type) },
    ),
  }));
}
