// POST /v1/layout on each dialect: a Markdown answer that exercises every component type, plain
// text, the caller's template and content analysis, determinism, bad input, and the component
// schemas in the OpenAPI document.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { componentSchemaId, componentTypes } from '../../src/modules/layout/components.js';
import { allDialects } from '../support/dialects.js';
import { bearer, startTestApp, type TestApp } from '../support/test-app.js';

interface Component {
  type: string;
  id: string;
  config: Record<string, unknown>;
}

interface LayoutJson {
  success: boolean;
  layout: {
    template: string;
    components: Component[];
    styling: { color_scheme: string; fonts: { headings: string; body: string } };
    content_analysis: { contentTypes: string[]; complexity: string };
    template_source: string;
  };
}

const answer = `# Quarterly results

Revenue grew in every quarter; see [the annual report](https://example.com/annual) and note that $E = mc^2$ still holds.

> [!WARNING]
> The figures are unaudited.

## Revenue

| Quarter | Revenue | Costs |
|---|--:|--:|
| Q1 | 1,200 | 800 |
| Q2 | 1,450 | 900 |
| Q3 | 1,700 | 950 |

## How to reproduce

1. Download the data
2. Run the script
3. Check the totals

\`\`\`python
print(sum([1200, 1450, 1700]))
\`\`\`

$$
\\sum_{q=1}^{3} r_q = 4350
$$

- Apples: 10
- Pears: 12
- Plums: 7

> The best way to predict the future is to invent it.
> — Alan Kay

---

![Revenue chart](https://example.com/chart.png)

## Sources

- [Annual report](https://example.com/annual)
- [Press release](https://example.com/press)
`;

describe.each(allDialects)('layout on $name', (dialect) => {
  let harness: TestApp;
  beforeAll(async () => {
    harness = await startTestApp({ dialect });
  });
  afterAll(async () => {
    await harness.close();
  });

  const layout = async (payload: unknown) => {
    const response = await harness.app.inject({
      method: 'POST',
      url: '/v1/layout',
      headers: bearer(harness.adminKey),
      payload: payload as object,
    });
    return response;
  };

  it('turns a Markdown answer into every component type, in reading order', async () => {
    const response = await layout({ message: answer });
    expect(response.statusCode, response.body).toBe(200);
    const { success, layout: result } = response.json<LayoutJson>();
    expect(success).toBe(true);
    expect(result.template).toBe('data_report');
    expect(result.components.map((component) => component.type)).toEqual([
      'heading',
      'text',
      'callout',
      'heading',
      'table',
      'chart',
      'heading',
      'steps',
      'code',
      'math',
      'list',
      'chart',
      'quote',
      'divider',
      'image',
      'sources',
    ]);
    expect(new Set(result.components.map((component) => component.type))).toEqual(
      new Set(componentTypes),
    );
    const byType = (type: string) =>
      result.components.filter((component) => component.type === type);
    expect(byType('heading')[0]!.config).toEqual({ text: 'Quarterly results', level: 1 });
    expect(byType('callout')[0]!.config).toMatchObject({
      variant: 'warning',
      text: 'The figures are unaudited.',
    });
    expect(byType('table')[0]!.config).toEqual({
      columns: [
        { key: 'c0', label: 'Quarter', align: null, numeric: false },
        { key: 'c1', label: 'Revenue', align: 'right', numeric: true },
        { key: 'c2', label: 'Costs', align: 'right', numeric: true },
      ],
      rows: [
        ['Q1', 1200, 800],
        ['Q2', 1450, 900],
        ['Q3', 1700, 950],
      ],
    });
    const [tableChart, listChart] = byType('chart');
    expect(tableChart!.config).toEqual({
      chart_type: 'line',
      labels: ['Q1', 'Q2', 'Q3'],
      datasets: [
        { label: 'Revenue', data: [1200, 1450, 1700] },
        { label: 'Costs', data: [800, 900, 950] },
      ],
      source: byType('table')[0]!.id,
    });
    expect(listChart!.config).toMatchObject({
      chart_type: 'bar',
      labels: ['Apples', 'Pears', 'Plums'],
      datasets: [{ data: [10, 12, 7] }],
    });
    expect(byType('steps')[0]!.config).toMatchObject({
      steps: [{ number: 1, text: 'Download the data' }, { number: 2 }, { number: 3 }],
    });
    expect(byType('code')[0]!.config).toEqual({
      language: 'python',
      code: 'print(sum([1200, 1450, 1700]))',
      lines: 1,
    });
    expect(byType('math')[0]!.config).toEqual({
      expression: '\\sum_{q=1}^{3} r_q = 4350',
      display: true,
    });
    expect(byType('quote')[0]!.config).toEqual({
      text: 'The best way to predict the future is to invent it.',
      attribution: 'Alan Kay',
    });
    expect(byType('image')[0]!.config).toEqual({
      url: 'https://example.com/chart.png',
      alt: 'Revenue chart',
    });
    expect(byType('sources')[0]!.config).toEqual({
      items: [
        { title: 'Annual report', url: 'https://example.com/annual' },
        { title: 'Press release', url: 'https://example.com/press' },
      ],
    });
    // The "Sources" heading became the sources component.
    expect(byType('heading').map((component) => component.config.text)).not.toContain('Sources');
    expect(result.content_analysis.contentTypes).toEqual([
      'text',
      'headings',
      'list',
      'steps',
      'code',
      'table',
      'chart_data',
      'quote',
      'callout',
      'math',
      'links',
      'image',
    ]);
    expect(result.content_analysis.complexity).toBe('complex');
    expect(result.styling).toEqual({
      color_scheme: 'data',
      fonts: { headings: 'Inter', body: 'Inter' },
    });
    expect(new Set(result.components.map((component) => component.id)).size).toBe(
      result.components.length,
    );
  });

  it('is deterministic: the same input gives the same layout, and ids follow content', async () => {
    const first = (await layout({ message: answer })).json<LayoutJson>();
    const second = (await layout({ message: answer })).json<LayoutJson>();
    expect(second).toEqual(first);
    const edited = (await layout({ message: `Intro line.\n\n${answer}` })).json<LayoutJson>();
    expect(edited.layout.components.slice(1).map((component) => component.id)).toEqual(
      first.layout.components.map((component) => component.id),
    );
  });

  it('lays out plain text as paragraphs in the simple template', async () => {
    const response = await layout({
      message: 'The meeting moved to Thursday.\n\nPlease bring the budget figures.',
    });
    const { layout: result } = response.json<LayoutJson>();
    expect(result.template).toBe('simple_answer');
    expect(result.components).toEqual([
      expect.objectContaining({
        type: 'text',
        config: {
          markdown: 'The meeting moved to Thursday.',
          text: 'The meeting moved to Thursday.',
        },
      }),
      expect.objectContaining({
        type: 'text',
        config: {
          markdown: 'Please bring the budget figures.',
          text: 'Please bring the budget figures.',
        },
      }),
    ]);
    expect(result.content_analysis).toEqual({ contentTypes: ['text'], complexity: 'simple' });
  });

  it('chooses step_by_step, code_walkthrough, article and list_summary from the content', async () => {
    const cases: [string, string][] = [
      [
        'To install:\n\n1. Download it\n2. Unpack it\n3. Run the installer\n4. Restart',
        'step_by_step',
      ],
      [
        'Use this:\n\n```js\nconst a = 1;\n```\n\nThen this:\n\n```js\nconst b = 2;\n```',
        'code_walkthrough',
      ],
      ['# Intro\n\nSome text.\n\n## Details\n\nMore text.\n\n## End\n\nDone.', 'article'],
      ['Options:\n\n- red\n- green\n- blue\n- yellow', 'list_summary'],
      ['Read [one](https://a.example/1) and [two](https://a.example/2).', 'research_brief'],
    ];
    for (const [message, template] of cases) {
      const { layout: result } = (await layout({ message })).json<LayoutJson>();
      expect(result.template, message).toBe(template);
    }
  });

  it('uses a suggested template and respects a given content analysis', async () => {
    const suggested = (
      await layout({
        message: answer,
        routing_result: { route_to: 'x', suggested_template: 'article' },
      })
    ).json<LayoutJson>();
    expect(suggested.layout).toMatchObject({ template: 'article', template_source: 'suggested' });
    const analysis = { contentTypes: ['code'], complexity: 'simple' };
    const given = (
      await layout({ message: 'Just text.', routing_result: { content_analysis: analysis } })
    ).json<LayoutJson>();
    expect(given.layout.content_analysis).toEqual(analysis);
    expect(given.layout.template).toBe('code_walkthrough');
  });

  it('refuses bad input with a 400 naming the field', async () => {
    const cases: [unknown, string][] = [
      [{}, 'message'],
      [{ message: '' }, 'message'],
      [
        { message: 'x', routing_result: { suggested_template: 'poster' } },
        'routing_result.suggested_template',
      ],
      [
        {
          message: 'x',
          routing_result: { content_analysis: { contentTypes: ['video'], complexity: 'simple' } },
        },
        'routing_result.content_analysis.contentTypes[0]',
      ],
    ];
    for (const [payload, param] of cases) {
      const response = await layout(payload);
      expect(response.statusCode, JSON.stringify(payload)).toBe(400);
      expect(response.json<{ error: { param: string } }>().error.param).toBe(param);
    }
  });

  it('publishes every component schema in the OpenAPI document', async () => {
    const response = await harness.app.inject({ method: 'GET', url: '/openapi.json' });
    const document = response.json<{ components: { schemas: Record<string, unknown> } }>();
    for (const type of componentTypes) {
      expect(document.components.schemas[componentSchemaId(type)], type).toBeDefined();
    }
  });
});
