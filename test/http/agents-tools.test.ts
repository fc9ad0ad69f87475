// The agents that work with tools, through the HTTP API: RetrievalAgent over knowledge bases (both
// dialects), WebAgent against a fake search provider and a local page server (SSRF refusals
// included), and StructureAgent on CSV and on text a model extracts a table from.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { allDialects } from '../support/dialects.js';
import { startChatHarness, type ChatHarness } from '../support/chat-harness.js';
import { bearer, createAccount } from '../support/test-app.js';
import { articlePage, articleParagraphs, articleTitle } from '../support/web-pages.js';
import { sendJson, startTestServer, type TestServer } from '../support/web-servers.js';

interface ExecutionResponse {
  success: boolean;
  execution_id: string;
  result: Record<string, unknown> | null;
  error?: { message: string; type: string; code: string; param?: string };
}

function caller(harness: () => ChatHarness) {
  return (method: 'GET' | 'POST', url: string, payload?: unknown, key?: string) =>
    harness().app.inject({
      method,
      url,
      headers: bearer(key ?? harness().adminKey),
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
}

async function createAgent(
  call: ReturnType<typeof caller>,
  body: Record<string, unknown>,
): Promise<string> {
  const response = await call('POST', '/v1/agents', { name: 'tool agent', ...body });
  expect(response.statusCode, response.body).toBe(201);
  return response.json<{ id: string }>().id;
}

describe.each(allDialects)('RetrievalAgent on $name', (dialect) => {
  let harness: ChatHarness;
  const call = caller(() => harness);
  let knowledgeBaseId = '';
  const documentIds: Record<string, string> = {};

  beforeAll(async () => {
    harness = await startChatHarness({ dialect });
    const kb = await call('POST', '/v1/knowledge-bases', {
      name: 'Handbook',
      description: 'How things work',
    });
    expect(kb.statusCode, kb.body).toBe(201);
    knowledgeBaseId = kb.json<{ id: string }>().id;
    const documents = {
      tides: {
        title: 'Tides',
        content: articleParagraphs.join('\n\n'),
        source: 'https://example.org/tides',
      },
      bread: {
        title: 'Baking bread',
        content:
          '# Baking bread\n\nKnead the dough for ten minutes, then let it rise for an hour in a warm place.',
        content_type: 'text/markdown',
        source: 'kitchen/bread.md',
      },
      volcanoes: {
        title: 'Volcanoes',
        content:
          '<h1>Volcanoes</h1><p>Magma rises through the crust and erupts as lava at a volcano.</p>',
        content_type: 'text/html',
        source: 'geo/volcanoes.html',
      },
    };
    for (const [name, document] of Object.entries(documents)) {
      const added = await call(
        'POST',
        `/v1/knowledge-bases/${knowledgeBaseId}/documents`,
        document,
      );
      expect(added.statusCode, added.body).toBe(201);
      documentIds[name] = added.json<{ id: string }>().id;
    }
  });
  afterAll(async () => {
    await harness.close();
  });
  beforeEach(() => {
    harness.upstream.reset();
  });

  const chatRequests = () =>
    harness.upstream.requests.filter((request) => request.endpoint === 'chat');

  it('finds the passages and writes an answer that cites them', async () => {
    const agentId = await createAgent(call, {
      agent_type: 'RetrievalAgent',
      configuration: { knowledge_base_ids: [knowledgeBaseId], result_count: 2 },
    });
    harness.upstream.enqueueFor('chat', {
      kind: 'reply',
      content: 'Tides are caused mostly by the pull of the Moon [1].',
    });
    const response = await call('POST', `/v1/agents/${agentId}/execute`, {
      query: 'What causes the tides of the sea?',
    });
    const body = response.json<ExecutionResponse>();
    expect(body.success, response.body).toBe(true);
    const result = body.result as {
      documents: Array<{
        document_id: string;
        title: string;
        text: string;
        score: number;
        source: string;
      }>;
      answer: string;
      citations: Array<{ index: number; document_id: string }>;
      search_mode: string;
    };
    expect(result.documents[0]).toMatchObject({
      document_id: documentIds.tides,
      title: 'Tides',
      source: 'https://example.org/tides',
    });
    expect(result.documents.length).toBeLessThanOrEqual(2);
    expect(result.search_mode).toBe('hybrid');
    expect(result.answer).toBe('Tides are caused mostly by the pull of the Moon [1].');
    expect(result.citations).toEqual([{ index: 1, document_id: documentIds.tides }]);
    const prompt = (chatRequests()[0]!.body as { messages: Array<{ content: string }> }).messages;
    expect(prompt[0]!.content).toContain("I don't know");
    expect(prompt[1]!.content).toContain('[1] Tides (https://example.org/tides)');
  });

  it('says it does not know, without asking a model, when nothing relevant is found', async () => {
    const agentId = await createAgent(call, {
      agent_type: 'RetrievalAgent',
      configuration: { knowledge_base_ids: [knowledgeBaseId], min_score: 0.9 },
    });
    const body = (
      await call('POST', `/v1/agents/${agentId}/execute`, {
        query: 'quantum chromodynamics lattice',
      })
    ).json<ExecutionResponse>();
    expect(body.success).toBe(true);
    expect(body.result).toMatchObject({
      documents: [],
      answer: expect.stringContaining("I don't know"),
    });
    expect(chatRequests()).toHaveLength(0);
  });

  it("searches the owner's knowledge bases when another account runs it as a public agent", async () => {
    const agentId = await createAgent(call, {
      agent_type: 'RetrievalAgent',
      configuration: { knowledge_base_ids: [knowledgeBaseId], answer: false },
      is_public: true,
    });
    const other = await createAccount(harness.app, harness.adminKey, `reader-${dialect.name}`);
    const body = (
      await call(
        'POST',
        `/v1/agents/${agentId}/execute`,
        { query: 'How long should dough rise?' },
        other.admin_key,
      )
    ).json<ExecutionResponse>();
    expect(body.success).toBe(true);
    expect(
      (body.result as { documents: Array<{ document_id: string }> }).documents[0]!.document_id,
    ).toBe(documentIds.bread);
    // The knowledge base itself stays invisible to the other account.
    expect(
      (await call('GET', `/v1/knowledge-bases/${knowledgeBaseId}`, undefined, other.admin_key))
        .statusCode,
    ).toBe(404);
  });

  it('fails the run, recorded, when a configured knowledge base no longer exists', async () => {
    const kb = await call('POST', '/v1/knowledge-bases', { name: 'Temporary' });
    const temporaryId = kb.json<{ id: string }>().id;
    const agentId = await createAgent(call, {
      agent_type: 'RetrievalAgent',
      configuration: { knowledge_base_ids: [temporaryId] },
    });
    expect(
      (
        await harness.app.inject({
          method: 'DELETE',
          url: `/v1/knowledge-bases/${temporaryId}`,
          headers: bearer(harness.adminKey),
        })
      ).statusCode,
    ).toBe(200);
    const body = (
      await call('POST', `/v1/agents/${agentId}/execute`, { query: 'anything' })
    ).json<ExecutionResponse>();
    expect(body).toMatchObject({ success: false, error: { code: 'not_found' } });
    const record = await call('GET', `/v1/executions/${body.execution_id}`);
    expect(record.json<{ execution: { status: string } }>().execution.status).toBe('failed');
  });
});

describe.each(allDialects)('WebAgent on $name', (dialect) => {
  let harness: ChatHarness;
  const call = caller(() => harness);
  let pages: TestServer;
  let blocked: TestServer;
  let searx: TestServer;

  beforeAll(async () => {
    blocked = await startTestServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/plain' });
      response.end('internal secrets');
    });
    pages = await startTestServer((request, response) => {
      if (request.url.pathname === '/article') {
        response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        response.end(articlePage);
      } else if (request.url.pathname === '/to-internal') {
        response.writeHead(302, { location: `${blocked.origin}/` });
        response.end();
      } else {
        response.writeHead(404);
        response.end();
      }
    });
    searx = await startTestServer((request, response) => {
      sendJson(response, 200, {
        query: request.url.searchParams.get('q'),
        results: [
          {
            title: articleTitle,
            url: `${pages.origin}/article`,
            content: 'Why the sea rises and falls.',
          },
          {
            title: 'Tide tables',
            url: `${pages.origin}/missing`,
            content: 'Tables for every port.',
          },
        ],
      });
    });
    harness = await startChatHarness({
      dialect,
      overrides: {
        web: {
          searxng_url: searx.origin,
          // Only the page server's port: the "internal" server on the same address stays blocked.
          allowed_private_targets: [`127.0.0.1:${pages.port}`],
        },
      },
    });
  });
  afterAll(async () => {
    await harness.close();
    await Promise.all([pages.close(), blocked.close(), searx.close()]);
  });
  beforeEach(() => {
    for (const server of [pages, blocked, searx]) server.reset();
  });

  it('searches, then reads the top pages without their navigation and ads', async () => {
    const agentId = await createAgent(call, {
      agent_type: 'WebAgent',
      configuration: { search_providers: ['searxng'], max_pages: 2 },
    });
    const body = (
      await call('POST', `/v1/agents/${agentId}/execute`, { query: 'how do tides work' })
    ).json<ExecutionResponse>();
    expect(body.success).toBe(true);
    const result = body.result as {
      results: Array<{ title: string; url: string; snippet: string }>;
      pages: Array<{ url: string; title: string; text: string }>;
      errors: Array<{ url: string; reason: string }>;
    };
    expect(searx.requests[0]!.url.searchParams.get('q')).toBe('how do tides work');
    expect(searx.requests[0]!.url.searchParams.get('format')).toBe('json');
    expect(result.results[0]).toEqual({
      title: articleTitle,
      url: `${pages.origin}/article`,
      snippet: 'Why the sea rises and falls.',
    });
    expect(result.pages).toHaveLength(1);
    expect(result.pages[0]!.text).toContain(articleParagraphs[0]!.slice(0, 60));
    expect(result.errors).toEqual([
      expect.objectContaining({ url: `${pages.origin}/missing`, reason: 'http_error' }),
    ]);
  });

  it.each([
    ['loopback outside the allow-list', () => `${blocked.origin}/`],
    ['the cloud metadata address', () => 'http://169.254.169.254/latest/meta-data/'],
    ['a redirect to loopback', () => `${pages.origin}/to-internal`],
  ])('refuses %s and never connects to it', async (_label, url) => {
    const agentId = await createAgent(call, { agent_type: 'WebAgent', configuration: {} });
    const body = (
      await call('POST', `/v1/agents/${agentId}/execute`, { urls: [url()] })
    ).json<ExecutionResponse>();
    expect(body.success).toBe(false);
    expect(body.error).toMatchObject({ code: 'invalid_parameter', param: 'urls' });
    expect(body.error!.message).toMatch(/block|not allowed|private|loopback|metadata/i);
    expect(blocked.connections).toBe(0);
  });

  it('refuses a search through a provider that is not configured, saying how to configure it', async () => {
    const agentId = await createAgent(call, {
      agent_type: 'WebAgent',
      configuration: { search_providers: ['brave'] },
    });
    const body = (
      await call('POST', `/v1/agents/${agentId}/execute`, { query: 'tides' })
    ).json<ExecutionResponse>();
    expect(body).toMatchObject({ success: false, error: { code: 'service_unavailable' } });
    expect(body.error!.message).toContain('BRAVE_API_KEY');
  });

  it('needs a query or urls (400, nothing recorded)', async () => {
    const agentId = await createAgent(call, { agent_type: 'WebAgent', configuration: {} });
    const response = await call('POST', `/v1/agents/${agentId}/execute`, {
      parameters: { max_pages: 1 },
    });
    expect(response.statusCode).toBe(400);
    expect(response.json<{ error: { param: string } }>().error.param).toBe('query');
  });
});

describe.each(allDialects)('StructureAgent on $name', (dialect) => {
  let harness: ChatHarness;
  const call = caller(() => harness);
  beforeAll(async () => {
    harness = await startChatHarness({ dialect });
  });
  afterAll(async () => {
    await harness.close();
  });

  const sales = [
    'region,month,amount',
    'North,2026-01,120',
    'South,2026-01,80',
    'North,2026-02,150',
    'South,2026-02,95.5',
    'East,2026-02,40',
  ].join('\n');

  it('groups, sorts and charts CSV data, with a Markdown table', async () => {
    const agentId = await createAgent(call, {
      agent_type: 'StructureAgent',
      configuration: { chart: { label_column: 'region', value_columns: ['total'], type: 'bar' } },
    });
    const body = (
      await call('POST', `/v1/agents/${agentId}/execute`, {
        data: sales,
        parameters: {
          operations: [
            {
              type: 'group_by',
              columns: ['region'],
              aggregates: [{ function: 'sum', column: 'amount', as: 'total' }],
            },
            { type: 'sort', by: [{ column: 'total', direction: 'desc' }] },
          ],
        },
      })
    ).json<ExecutionResponse>();
    expect(body.success).toBe(true);
    expect(body.result).toMatchObject({
      columns: ['region', 'total'],
      rows: [
        { region: 'North', total: 270 },
        { region: 'South', total: 175.5 },
        { region: 'East', total: 40 },
      ],
      chart: {
        labels: ['North', 'South', 'East'],
        datasets: [{ label: 'total', data: [270, 175.5, 40] }],
      },
      row_count: 3,
      source: 'data',
    });
    expect((body.result as { markdown: string }).markdown.split('\n')[0]).toBe(
      '| region | total |',
    );
  });

  it('pivots JSON rows', async () => {
    const agentId = await createAgent(call, { agent_type: 'StructureAgent', configuration: {} });
    const rows = sales
      .split('\n')
      .slice(1)
      .map((line) => {
        const [region, month, amount] = line.split(',');
        return { region, month, amount: Number(amount) };
      });
    const body = (
      await call('POST', `/v1/agents/${agentId}/execute`, {
        data: rows,
        parameters: {
          operations: [
            {
              type: 'pivot',
              index: 'region',
              columns: 'month',
              values: 'amount',
              aggregate: 'sum',
            },
          ],
        },
      })
    ).json<ExecutionResponse>();
    expect(body.result).toMatchObject({
      columns: ['region', '2026-01', '2026-02'],
      rows: [
        { region: 'North', '2026-01': 120, '2026-02': 150 },
        { region: 'South', '2026-01': 80, '2026-02': 95.5 },
        { region: 'East', '2026-01': null, '2026-02': 40 },
      ],
    });
  });

  it('answers bad data or operations with a 400 naming the field, recording nothing', async () => {
    const agentId = await createAgent(call, { agent_type: 'StructureAgent', configuration: {} });
    const response = await call('POST', `/v1/agents/${agentId}/execute`, {
      data: sales,
      parameters: { operations: [{ type: 'sort', by: [{ column: 'price' }] }] },
    });
    expect(response.statusCode).toBe(400);
    expect(response.json<{ error: { param: string; message: string } }>().error).toMatchObject({
      param: 'parameters.operations[0].by[0].column',
      message: expect.stringContaining("'price'"),
    });
  });

  it('extracts a table from text with a model when no data is given', async () => {
    const agentId = await createAgent(call, { agent_type: 'StructureAgent', configuration: {} });
    harness.upstream.enqueue({
      kind: 'reply',
      content: JSON.stringify({
        columns: ['city', 'population'],
        rows: [
          ['Oslo', 709000],
          ['Bergen', 291000],
        ],
      }),
    });
    const body = (
      await call('POST', `/v1/agents/${agentId}/execute`, {
        query: 'Oslo has about 709,000 inhabitants and Bergen about 291,000.',
        parameters: { operations: [{ type: 'sort', by: [{ column: 'population' }] }] },
      })
    ).json<ExecutionResponse>();
    expect(body).toMatchObject({
      success: true,
      result: {
        source: 'extracted',
        rows: [
          { city: 'Bergen', population: 291000 },
          { city: 'Oslo', population: 709000 },
        ],
      },
    });
  });
});
