// The tool sources against real servers: MCP servers from the official SDK (Streamable HTTP, the
// older HTTP+SSE, a paged tool list) and a plain HTTP API described by an OpenAPI document, all on
// 127.0.0.1, which the operator's `tools.allowed_private_targets` must name. Checked: tool lists
// (pages, bound, cache, allow-lists), calls (arguments, errors, cancellation, timeouts, a server
// gone), tokens (from the environment, stored sealed and never shown), and the address policy
// (loopback, metadata, a name resolving inside, a name that changes its answer, redirects).
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, ConfigError } from '../src/config/load-config.js';
import type { AppConfig } from '../src/config/config.js';
import { AppError } from '../src/errors/app-error.js';
import { TargetAllowList } from '../src/net/address-policy.js';
import type { Resolver } from '../src/net/fetch-target.js';
import { createPolicyFetch, PolicyFetchError } from '../src/net/policy-fetch.js';
import { toolsConfig } from '../src/modules/tools/tools.config.js';
import { textConfig } from '../src/config/text-config.js';
import { TextPool } from '../src/text-pool/text-pool.js';
import Type from 'typebox';
import {
  ToolEntrySchema,
  type StoredToolEntry,
  type ToolEntry,
} from '../src/modules/tools/tool-entries.js';
import {
  shownToolSources,
  ToolSources,
  type OpenedToolSources,
} from '../src/modules/tools/tool-sources.js';
import { requireSchema } from '../src/validation/schema-validator.js';
import {
  startHttpServer,
  startPagedServer,
  startSseServer,
  startStreamableServer,
  type TestMcpServer,
} from './support/mcp-test-servers.js';

const secretsKey = randomBytes(32).toString('hex');

interface SourcesSetup {
  allow?: string[];
  env?: Record<string, string>;
  callTimeoutMs?: number;
  maxResultChars?: number;
  maxResponseBytes?: number;
  resolve?: Resolver;
}

const opened: OpenedToolSources[] = [];
const services: ToolSources[] = [];
/** The text threads large answers are reduced in (started on first use). */
const text = new TextPool(textConfig());

function sources(setup: SourcesSetup = {}): ToolSources {
  const env: Record<string, string> = {
    TOOL_SECRETS_KEY: secretsKey,
    TOOL_SECRET_DEMO: 'env-token',
    ...setup.env,
  };
  const service = new ToolSources({
    tools: toolsConfig({
      allowed_private_targets: setup.allow ?? ['127.0.0.1'],
      call_timeout_ms: setup.callTimeoutMs ?? 10_000,
      max_result_chars: setup.maxResultChars ?? 1000,
      ...(setup.maxResponseBytes === undefined
        ? {}
        : { max_response_bytes: setup.maxResponseBytes }),
    }),
    secrets: { get: (name) => env[name] },
    text,
    clientInfo: { name: 'platform-test', version: '0.0.0' },
    ...(setup.resolve === undefined ? {} : { resolve: setup.resolve }),
  });
  services.push(service);
  return service;
}

/**
 * Saves `entries` as the service does: validated against the entries' schema first (an agent's
 * configuration is, before its tools are prepared), then prepared; `previous` as stored.
 */
async function save(
  service: ToolSources,
  accountId: string,
  entries: unknown[],
  previous: unknown[] = [],
): Promise<StoredToolEntry[]> {
  const checked = requireSchema<ToolEntry[]>(
    Type.Array(ToolEntrySchema),
    entries,
    'tool entries',
    'configuration.tools',
  );
  return service.prepareForSave(accountId, checked, previous as StoredToolEntry[]);
}

/** A run's tools of `entries`: as stored (prepared), or as given where nothing needs preparing. */
async function open(
  service: ToolSources,
  entries: unknown[],
  accountId = 'acct_1',
  signal = new AbortController().signal,
): Promise<OpenedToolSources> {
  const box = await service.open(accountId, entries as StoredToolEntry[], signal);
  opened.push(box);
  return box;
}

const never = () => new AbortController().signal;

/** The 400 `prepareForSave` throws, as { param, message }. */
async function refusal(
  promise: Promise<unknown>,
): Promise<{ param: string | null; message: string }> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(AppError);
  const appError = error as AppError;
  expect(appError.status).toBe(400);
  return { param: appError.param, message: appError.message };
}

afterEach(async () => {
  await Promise.all(opened.splice(0).map((box) => box.close()));
});

afterAll(async () => {
  await Promise.all(services.splice(0).map((service) => service.close()));
  await text.close();
});

describe('MCP servers over Streamable HTTP', () => {
  let server: TestMcpServer;
  const entry = () => ({ type: 'mcp', name: 'demo', url: server.url });

  beforeAll(async () => {
    server = await startStreamableServer();
  });
  afterAll(async () => {
    await server.close();
  });

  it('lists the tools as <entry>__<tool> with their schemas, and calls them with arguments', async () => {
    const box = await open(sources(), [entry(), { type: 'web_search', name: 'search' }]);
    expect(box.unavailable).toEqual([]);
    expect(box.tools.map((tool) => tool.name).sort()).toEqual(
      ['add', 'big', 'echo', 'explode', 'fail', 'picture', 'refund', 'slow', 'wait'].map(
        (name) => `demo__${name}`,
      ),
    );
    const echo = box.tools.find((tool) => tool.name === 'demo__echo')!;
    expect(echo).toMatchObject({
      source: 'demo',
      requiresApproval: false,
      idempotent: false,
      description: 'Repeats a text.',
    });
    expect(echo.parameters).toMatchObject({
      type: 'object',
      properties: { text: { type: 'string' } },
    });

    expect(await box.call('demo__echo', { text: 'hi', times: 3 }, never())).toEqual({
      ok: true,
      content: 'hi hi hi',
    });
    expect(await box.call('demo__add', { a: 2, b: 40 }, never())).toEqual({
      ok: true,
      content: '{"sum":42}',
    });
    expect(await box.call('demo__picture', {}, never())).toEqual({
      ok: true,
      content: 'Here it is:\n[image image/png]',
    });
    const big = await box.call('demo__big', {}, never());
    expect(big.ok).toBe(true);
    expect(big.content.startsWith('x'.repeat(1000))).toBe(true);
    expect(big.content).toContain(
      '[… cut: the answer had 5000 characters, the first 1000 are kept]',
    );
    expect(await box.call('demo__nothing', {}, never())).toMatchObject({ ok: false });
  });

  it('answers a tool error, a thrown error and bad arguments with ok: false', async () => {
    const box = await open(sources(), [entry()]);
    expect(await box.call('demo__fail', {}, never())).toEqual({
      ok: false,
      content: 'the widget is broken',
    });
    const thrown = await box.call('demo__explode', {}, never());
    expect(thrown.ok).toBe(false);
    expect(thrown.content).toContain('kaboom');
    const invalid = await box.call('demo__echo', { text: 5 }, never());
    expect(invalid.ok).toBe(false);
  });

  it('rejects a call when the run is cancelled, and times a slow tool out as ok: false', async () => {
    const box = await open(sources(), [entry()]);
    const run = new AbortController();
    const call = box.call('demo__slow', {}, run.signal);
    await server.slowStarted();
    run.abort(new Error('run cancelled'));
    await expect(call).rejects.toThrow('run cancelled');

    const quick = await open(sources({ callTimeoutMs: 300 }), [entry()]);
    const late = quick.call('demo__slow', {}, never());
    await server.slowStarted();
    const outcome = await late;
    expect(outcome.ok).toBe(false);
    expect(outcome.content).toContain('did not answer within 300 ms');
    // The connection still works after a timeout.
    expect(await quick.call('demo__echo', { text: 'still here' }, never())).toEqual({
      ok: true,
      content: 'still here',
    });
  });

  it('keeps the tool list per account, URL and token: a second run does not list again', async () => {
    const service = sources();
    const lists = () =>
      server.requests.filter((request) => request.rpc.includes('tools/list')).length;
    const before = lists();
    await open(service, [entry()]);
    expect(lists()).toBe(before + 1);

    const requestsBefore = server.requests.length;
    const again = await open(service, [entry()]);
    expect(server.requests.length).toBe(requestsBefore); // no connection at all until a call
    expect(again.tools.length).toBe(9);
    expect(await again.call('demo__echo', { text: 'lazy' }, never())).toMatchObject({ ok: true });

    await open(service, [entry()], 'acct_2');
    await open(service, [{ ...entry(), bearer_token_env: 'TOOL_SECRET_DEMO' }]);
    expect(lists()).toBe(before + 3);
  });

  it('offers only allowed_tools, and marks the tools requires_approval names', async () => {
    const box = await open(sources(), [
      { ...entry(), allowed_tools: ['echo', 'add', 'unknown'], requires_approval: ['add'] },
      { ...entry(), name: 'all', allowed_tools: ['fail'], requires_approval: true },
    ]);
    expect(box.tools.map((tool) => [tool.name, tool.requiresApproval])).toEqual([
      ['demo__echo', false],
      ['demo__add', true],
      ['all__fail', true],
    ]);
  });

  it('sends the bearer token from a TOOL_SECRET_ variable and the entry headers', async () => {
    const service = sources();
    const [stored] = await save(
      service,
      'acct_1',
      [{ ...entry(), bearer_token_env: 'TOOL_SECRET_DEMO', headers: { 'X-Custom': 'yes' } }],
      [],
    );
    const box = await open(service, [stored], 'acct_env');
    await box.call('demo__echo', { text: 'a' }, never());
    const calls = server.requests.filter((request) => request.rpc.includes('tools/call'));
    expect(calls.at(-1)).toMatchObject({ authorization: 'Bearer env-token', custom: 'yes' });
  });

  it('answers ok: false, not a crash, when the server goes away during a run', async () => {
    const gone = await startStreamableServer();
    const box = await open(sources(), [{ type: 'mcp', name: 'gone', url: gone.url }]);
    expect(await box.call('gone__echo', { text: 'before' }, never())).toMatchObject({ ok: true });
    await gone.close();
    const outcome = await box.call('gone__echo', { text: 'after' }, never());
    expect(outcome.ok).toBe(false);
    expect(outcome.content).toContain(`127.0.0.1:${gone.port}`);
  });

  it('answers ok: false when the server closes the connection during a call', async () => {
    const gone = await startStreamableServer();
    const box = await open(sources({ callTimeoutMs: 2000 }), [
      { type: 'mcp', name: 'gone', url: gone.url },
    ]);
    const call = box.call('gone__slow', {}, never());
    await gone.slowStarted();
    await gone.close();
    expect((await call).ok).toBe(false);
  });
});

describe('an MCP server over HTTP+SSE', () => {
  let server: TestMcpServer;

  beforeAll(async () => {
    server = await startSseServer();
  });
  afterAll(async () => {
    await server.close();
  });

  it('lists and calls its tools, errors included, with the stored token', async () => {
    const service = sources();
    const stored = await save(
      service,
      'acct_1',
      [{ type: 'mcp', name: 'old', url: server.url, transport: 'sse', bearer_token: 'sse-secret' }],
      [],
    );
    const box = await open(service, stored);
    expect(box.tools.map((tool) => tool.name)).toContain('old__echo');
    expect(await box.call('old__echo', { text: 'over sse' }, never())).toEqual({
      ok: true,
      content: 'over sse',
    });
    expect(await box.call('old__fail', {}, never())).toMatchObject({ ok: false });
    expect(server.requests.every((request) => request.authorization === 'Bearer sse-secret')).toBe(
      true,
    );
  });
});

describe('a paged tool list', () => {
  it('follows nextCursor and stops at 200 tools', async () => {
    const server = await startPagedServer(250, 100);
    try {
      const box = await open(sources(), [{ type: 'mcp', name: 'paged', url: server.url }]);
      expect(box.tools.length).toBe(200);
      expect(box.tools.at(-1)?.name).toBe('paged__tool_199');
      const lists = server.requests.filter((request) => request.rpc.includes('tools/list'));
      expect(lists.length).toBe(2);
      expect(await box.call('paged__tool_7', {}, never())).toEqual({
        ok: true,
        content: 'called tool_7',
      });
    } finally {
      await server.close();
    }
  });
});

describe('stored tokens', () => {
  let server: TestMcpServer;
  beforeAll(async () => {
    server = await startStreamableServer();
  });
  afterAll(async () => {
    await server.close();
  });

  it('are sealed when saved, never shown, kept when the entry comes back without one, and sent', async () => {
    const service = sources();
    const given = {
      type: 'mcp',
      name: 'sealed',
      url: server.url,
      bearer_token: 'very-secret-token',
    };
    const stored = await save(service, 'acct_1', [given], []);
    const storedEntry = stored[0] as Record<string, unknown>;
    expect(storedEntry.bearer_token).toBeUndefined();
    expect(typeof storedEntry.bearer_token_encrypted).toBe('string');
    expect(JSON.stringify(stored)).not.toContain('very-secret-token');

    const shown = service.shown(stored);
    expect(shown).toEqual([
      {
        type: 'mcp',
        name: 'sealed',
        url: server.url,
        requires_approval: false,
        idempotent: false,
        bearer_token_set: true,
      },
    ]);
    expect(JSON.stringify(shown)).not.toContain(storedEntry.bearer_token_encrypted as string);

    // Saved again as shown: the sealed token stays.
    const again = await save(service, 'acct_1', shown, stored);
    expect((again[0] as Record<string, unknown>).bearer_token_encrypted).toBe(
      storedEntry.bearer_token_encrypted,
    );

    const box = await open(service, again);
    await box.call('sealed__echo', { text: 'x' }, never());
    expect(server.requests.at(-1)?.authorization).toBe('Bearer very-secret-token');
  });

  it('cannot be saved without the operator key (400 naming the field)', async () => {
    const service = sources({ env: { TOOL_SECRETS_KEY: '' } });
    const { param, message } = await refusal(
      save(
        service,
        'acct_1',
        [
          { type: 'web_search', name: 'search' },
          { type: 'mcp', name: 'x', url: server.url, bearer_token: 't' },
        ],
        [],
      ),
    );
    expect(param).toBe('configuration.tools[1].bearer_token');
    expect(message).toContain('TOOL_SECRETS_KEY');
  });

  it('that the current key cannot open make the source answer so', async () => {
    const saved = await save(
      sources(),
      'acct_1',
      [
        { type: 'mcp', name: 'm', url: server.url, bearer_token: 't1' },
        {
          type: 'openapi',
          name: 'o',
          base_url: 'http://127.0.0.1:9/',
          document: { openapi: '3.0.3', paths: { '/x': { get: { operationId: 'getX' } } } },
          bearer_token: 't2',
        },
      ],
      [],
    );
    const otherKey = sources({ env: { TOOL_SECRETS_KEY: randomBytes(32).toString('base64') } });
    const box = await open(otherKey, saved);
    expect(box.unavailable).toEqual([
      { source: 'm', message: expect.stringContaining('cannot be read with the current key') },
    ]);
    const outcome = await box.call('o__getX', {}, never());
    expect(outcome).toEqual({
      ok: false,
      content: expect.stringContaining('cannot be read with the current key'),
    });
    // Nor in another account, with the right key.
    const elsewhere = await open(sources(), saved, 'acct_other');
    expect(elsewhere.unavailable.map((item) => item.source)).toEqual(['m']);
  });
});

describe('saving tool sources', () => {
  it('checks names, token variables, headers and URLs, naming the field', async () => {
    const service = sources();
    const url = 'http://127.0.0.1:1/mcp';
    expect(
      await refusal(
        save(
          service,
          'a',
          [
            { type: 'mcp', name: 'a', url },
            { type: 'agent', name: 'a', agent_id: 'x' },
          ],
          [],
        ),
      ),
    ).toMatchObject({ param: 'configuration.tools[1].name' });
    expect(
      await refusal(
        save(service, 'a', [{ type: 'mcp', name: 'a', url, bearer_token_env: 'DATABASE_URL' }], []),
      ),
    ).toMatchObject({
      param: 'configuration.tools[0].bearer_token_env',
      message: expect.stringContaining('TOOL_SECRET_'),
    });
    expect(
      await refusal(
        save(
          service,
          'a',
          [{ type: 'mcp', name: 'a', url, headers: { Authorization: 'Bearer x' } }],
          [],
        ),
      ),
    ).toMatchObject({ param: 'configuration.tools[0].headers' });
    expect(
      await refusal(
        save(service, 'a', [{ type: 'mcp', name: 'a', url: 'ftp://example.com/' }], []),
      ),
    ).toMatchObject({ param: 'configuration.tools[0].url' });
    expect(
      await refusal(save(service, 'a', [{ type: 'mcp', name: 'a', url, bogus: 1 }], [])),
    ).toMatchObject({ param: expect.stringContaining('configuration.tools[0]') });
    // Built-in entries are passed through as given.
    const builtIn = { type: 'knowledge_search', name: 'kb', knowledge_base_ids: ['kb_1'] };
    expect(await save(service, 'a', [builtIn], [])).toEqual([builtIn]);
  });
});

describe('the address policy', () => {
  it('refuses loopback without the operator allow-list, at save time and at connect time', async () => {
    const server = await startStreamableServer();
    try {
      const strict = sources({ allow: [] });
      const entry = { type: 'mcp', name: 'local', url: server.url };
      const { param, message } = await refusal(save(strict, 'a', [entry], []));
      expect(param).toBe('configuration.tools[0].url');
      expect(message).toContain('loopback');
      expect(message).toContain('tools.allowed_private_targets');
      // A stored entry (saved under another configuration) is refused when connecting.
      const box = await open(strict, [entry]);
      expect(box.tools).toEqual([]);
      expect(box.unavailable[0]?.message).toContain('Refused to connect');
      expect(server.requests).toEqual([]);
    } finally {
      await server.close();
    }
  });

  it('refuses the metadata address and metadata host names, even with loopback allowed', async () => {
    let resolved = 0;
    const service = sources({
      allow: ['127.0.0.0/8', '169.254.0.0/16'],
      resolve: () => {
        resolved += 1;
        return Promise.resolve([{ address: '127.0.0.1', family: 4 }]);
      },
    });
    const metadata = await refusal(
      save(service, 'a', [{ type: 'mcp', name: 'm', url: 'http://169.254.169.254/latest' }], []),
    );
    expect(metadata.message).toContain('cloud metadata');
    const named = await refusal(
      save(service, 'a', [{ type: 'mcp', name: 'm', url: 'http://metadata.google.internal/' }], []),
    );
    expect(named.message).toContain('cloud metadata');
    expect(resolved).toBe(0);
    const box = await open(service, [
      { type: 'mcp', name: 'm', url: 'http://169.254.169.254/mcp' },
    ]);
    expect(box.unavailable[0]?.message).toContain('cloud metadata');
  });

  it('refuses a host name that resolves to loopback, and one that changes its answer after the check', async () => {
    const server = await startStreamableServer();
    try {
      const inside: Resolver = () => Promise.resolve([{ address: '127.0.0.1', family: 4 }]);
      const strict = sources({ allow: [], resolve: inside });
      const url = `http://tools.example:${server.port}/mcp`;
      const { message } = await refusal(save(strict, 'a', [{ type: 'mcp', name: 'n', url }], []));
      expect(message).toContain('tools.example resolves to a loopback address');
      expect(message).not.toContain('127.0.0.1');

      // Public at save time, loopback when connecting (DNS rebinding).
      let answers = 0;
      const rebinding: Resolver = () =>
        Promise.resolve(
          answers++ === 0
            ? [{ address: '93.184.216.34', family: 4 as const }]
            : [{ address: '127.0.0.1', family: 4 as const }],
        );
      const fooled = sources({ allow: [], resolve: rebinding });
      const stored = await save(fooled, 'a', [{ type: 'mcp', name: 'n', url }], []);
      const box = await open(fooled, stored);
      expect(box.unavailable[0]?.message).toContain('resolves to a loopback address');
      expect(server.requests).toEqual([]);
    } finally {
      await server.close();
    }
  });

  it('does not follow a redirect, even to an allowed address', async () => {
    const target = await startStreamableServer();
    const redirecting = await startHttpServer((_request, _body, response) => {
      response.writeHead(302, { location: target.url }).end();
    });
    try {
      const box = await open(sources(), [
        { type: 'mcp', name: 'r', url: `http://127.0.0.1:${redirecting.port}/mcp` },
      ]);
      expect(box.unavailable[0]?.message).toContain('answered with a redirect (HTTP 302)');
      expect(target.requests).toEqual([]);
    } finally {
      await Promise.all([target.close(), redirecting.close()]);
    }
  });

  it('is what the policy fetch applies to every request', async () => {
    const policy = createPolicyFetch({
      allowList: TargetAllowList.empty,
      connectTimeoutMs: 1000,
      headersTimeoutMs: 1000,
    });
    try {
      const error = await policy.fetch('http://[::1]:9999/x').catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(PolicyFetchError);
      expect((error as PolicyFetchError).reason).toBe('blocked_address');
      expect((error as Error).message).toBe(
        'Refused to connect to http://[::1]:9999/x: ::1 is a loopback address, which tool connections may not reach.',
      );
      const named = await policy
        .fetch('http://localhost:9999/x')
        .catch((caught: unknown) => caught);
      expect((named as PolicyFetchError).reason).toBe('blocked_address');
      // The fetch standard's bad ports are refused too, in words.
      const badPort = await policy
        .fetch('http://example.com:25/')
        .catch((caught: unknown) => caught);
      expect((badPort as Error).message).toContain('port 25 is not one fetch may use');
    } finally {
      await policy.close();
    }
  });
});

describe('the policy fetch', () => {
  it('cuts off an answer larger than its bound', async () => {
    const large = await startHttpServer((_request, _body, response) => {
      response.writeHead(200, { 'content-type': 'text/plain' }).end('y'.repeat(4096));
    });
    const policy = createPolicyFetch({
      allowList: TargetAllowList.parse(['127.0.0.1']),
      connectTimeoutMs: 5000,
      headersTimeoutMs: 5000,
      maxResponseBytes: 1000,
    });
    try {
      const response = await policy.fetch(`http://127.0.0.1:${large.port}/`);
      const error = await response.text().catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(PolicyFetchError);
      expect((error as PolicyFetchError).reason).toBe('too_large');
    } finally {
      await policy.close();
      await large.close();
    }
  });
});

describe('OpenAPI tool sources', () => {
  let api: Awaited<ReturnType<typeof startHttpServer>>;
  const document = () => ({
    openapi: '3.1.0',
    info: { title: 'Items', version: '1' },
    servers: [{ url: `http://127.0.0.1:${api.port}/api` }],
    paths: {
      '/items/{id}': {
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
        get: {
          operationId: 'getItem',
          summary: 'One item.',
          parameters: [
            { name: 'verbose', in: 'query', schema: { type: 'boolean' } },
            { name: 'X-Trace', in: 'header', schema: { type: 'string' } },
          ],
        },
      },
      '/items': {
        post: {
          operationId: 'createItem',
          requestBody: {
            required: true,
            content: { 'application/json': { schema: { $ref: '#/components/schemas/NewItem' } } },
          },
        },
      },
      '/missing': { get: { operationId: 'missing' } },
      '/untitled': { get: { summary: 'No operationId: not a tool.' } },
    },
    components: {
      schemas: {
        NewItem: {
          type: 'object',
          required: ['name'],
          properties: {
            name: { type: 'string', example: 'cup' },
            tags: { $ref: '#/components/schemas/Tags' },
          },
        },
        Tags: { type: 'array', items: { type: 'string' }, nullable: true },
      },
    },
  });

  beforeAll(async () => {
    api = await startHttpServer((request, body, response) => {
      if (request.url?.startsWith('/api/missing')) {
        response
          .writeHead(404, { 'content-type': 'application/json' })
          .end('{"error":"no such thing"}');
        return;
      }
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({
          method: request.method,
          url: request.url,
          body: body === '' ? null : JSON.parse(body),
        }),
      );
    });
  });
  afterAll(async () => {
    await api.close();
  });

  it('makes a tool per operation whose arguments reach the API', async () => {
    const service = sources();
    const stored = await save(
      service,
      'acct_1',
      [
        {
          type: 'openapi',
          name: 'items',
          document: document(),
          bearer_token_env: 'TOOL_SECRET_DEMO',
        },
      ],
      [],
    );
    const box = await open(service, stored);
    expect(box.tools.map((tool) => tool.name)).toEqual([
      'items__getItem',
      'items__createItem',
      'items__missing',
    ]);
    const create = box.tools[1]!;
    expect(create.parameters).toEqual({
      type: 'object',
      properties: {
        body: {
          type: 'object',
          required: ['name'],
          properties: {
            name: { type: 'string' },
            tags: { type: ['array', 'null'], items: { type: 'string' } },
          },
        },
      },
      required: ['body'],
      additionalProperties: false,
    });
    expect(box.tools[0]!.parameters).toMatchObject({ required: ['id'] });

    const got = await box.call(
      'items__getItem',
      { id: 'a b/c', verbose: true, 'X-Trace': 't-1' },
      never(),
    );
    expect(got.ok).toBe(true);
    expect(got.content.split('\n')[0]).toBe('HTTP 200 OK');
    const last = () => api.requests.at(-1)!;
    expect(last().url).toBe('/api/items/a%20b%2Fc?verbose=true');
    expect(last().headers['x-trace']).toBe('t-1');
    expect(last().headers.authorization).toBe('Bearer env-token');

    const created = await box.call(
      'items__createItem',
      { body: { name: 'cup', tags: ['x'] } },
      never(),
    );
    expect(created.ok).toBe(true);
    expect(last()).toMatchObject({
      method: 'POST',
      url: '/api/items',
      body: '{"name":"cup","tags":["x"]}',
    });

    const missing = await box.call('items__missing', {}, never());
    expect(missing).toEqual({
      ok: false,
      content: 'HTTP 404 Not Found\n{"error":"no such thing"}',
    });
  });

  it('exposes only the operations listed, and refuses unknown ones, cycles and bad documents', async () => {
    const service = sources();
    const box = await open(service, [
      { type: 'openapi', name: 'items', document: document(), operations: ['missing'] },
    ]);
    expect(box.tools.map((tool) => tool.name)).toEqual(['items__missing']);

    expect(
      await refusal(
        save(
          service,
          'a',
          [{ type: 'openapi', name: 'i', document: document(), operations: ['getItem', 'nope'] }],
          [],
        ),
      ),
    ).toMatchObject({ param: 'configuration.tools[0].operations[1]' });

    const cyclic = document();
    (cyclic.components.schemas.Tags as Record<string, unknown>) = {
      type: 'array',
      items: { $ref: '#/components/schemas/NewItem' },
    };
    const cycle = await refusal(
      save(service, 'a', [{ type: 'openapi', name: 'i', document: cyclic }], []),
    );
    expect(cycle.param).toBe('configuration.tools[0].document.paths./items.post.requestBody');
    expect(cycle.message).toContain("$ref '#/components/schemas/NewItem'");

    const external = document();
    external.paths['/missing'].get = {
      operationId: 'missing',
      parameters: [{ $ref: 'https://example.com/p.json' }],
    } as never;
    expect(
      (await refusal(save(service, 'a', [{ type: 'openapi', name: 'i', document: external }], [])))
        .message,
    ).toContain('only references within the document');

    const noServer = { ...document(), servers: [{ url: '/relative' }] };
    expect(
      await refusal(save(service, 'a', [{ type: 'openapi', name: 'i', document: noServer }], [])),
    ).toMatchObject({
      param: 'configuration.tools[0].base_url',
    });
    const empty = { openapi: '3.0.0', paths: { '/x': { get: { summary: 'no id' } } } };
    expect(
      await refusal(
        save(
          service,
          'a',
          [{ type: 'openapi', name: 'i', document: empty, base_url: 'http://127.0.0.1:1' }],
          [],
        ),
      ),
    ).toMatchObject({
      param: 'configuration.tools[0].document',
    });
    const huge = { ...document(), info: { title: 'x'.repeat(600 * 1024), version: '1' } };
    expect(
      await refusal(save(service, 'a', [{ type: 'openapi', name: 'i', document: huge }], [])),
    ).toMatchObject({
      param: 'configuration.tools[0].document',
    });
    const strict = sources({ allow: [] });
    expect(
      await refusal(save(strict, 'a', [{ type: 'openapi', name: 'i', document: document() }], [])),
    ).toMatchObject({
      param: 'configuration.tools[0].document.servers',
    });
  });

  it('answers a refused connection as ok: false', async () => {
    const box = await open(sources({ allow: [] }), [
      { type: 'openapi', name: 'items', document: document() },
    ]);
    const outcome = await box.call('items__missing', {}, never());
    expect(outcome.ok).toBe(false);
    expect(outcome.content).toContain('loopback address');
    expect(
      api.requests.some(
        (request) => request.url === '/api/missing' && request.headers['x-never'] !== undefined,
      ),
    ).toBe(false);
  });
});

describe('the tools configuration', () => {
  it('has documented defaults, reads the file, and checks the allow-list and the key', () => {
    const defaults: AppConfig['tools'] = loadConfig({ env: {} }).tools;
    expect(defaults).toEqual({
      allowedPrivateTargets: [],
      callTimeoutMs: 30_000,
      listCacheTtlMs: 300_000,
      maxResultChars: 20_000,
      secretEnvPrefix: 'TOOL_SECRET_',
      approvalTimeoutMs: 86_400_000,
      maxCallsPerTurn: 16,
      maxArgumentBytes: 65_536,
      maxResponseBytes: 4_194_304,
    });
    const configured = loadConfig({
      env: {},
      overrides: { tools: { allowed_private_targets: ['10.0.0.0/8'], call_timeout_ms: 5000 } },
    }).tools;
    expect(configured).toMatchObject({
      allowedPrivateTargets: ['10.0.0.0/8'],
      callTimeoutMs: 5000,
    });

    const problems = (() => {
      try {
        loadConfig({
          env: { TOOL_SECRETS_KEY: 'short' },
          overrides: { tools: { allowed_private_targets: ['not a host!'] } },
        });
        return [];
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigError);
        return (error as ConfigError).problems;
      }
    })();
    expect(problems.join('\n')).toContain("tools.allowed_private_targets[0] 'not a host!'");
    expect(problems.join('\n')).toContain('TOOL_SECRETS_KEY');
  });

  it('shows entries without tokens (shownToolSources)', () => {
    expect(
      shownToolSources([
        { type: 'mcp', name: 'a', url: 'https://x.example/', bearer_token_encrypted: 'v1.a.b.c' },
        { type: 'agent', name: 'b', agent_id: 'agt_1' },
      ]),
    ).toEqual([
      { type: 'mcp', name: 'a', url: 'https://x.example/', bearer_token_set: true },
      { type: 'agent', name: 'b', agent_id: 'agt_1' },
    ]);
  });
});
