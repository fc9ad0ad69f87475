// GET /metrics: the Prometheus text moves with the service's work (HTTP requests by route pattern,
// model calls, tokens and errors by catalog model, rate-limit refusals, WebSocket sessions, jobs),
// needs an owner admin key on the API's port, and is served without one on METRICS_PORT instead.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMetricsServer } from '../../src/http/metrics-server.js';
import { startChatHarness, type ChatHarness } from '../support/chat-harness.js';
import { allDialects } from '../support/dialects.js';
import { bearer, createKey, startTestApp } from '../support/test-app.js';
import { connect } from '../support/ws-client.js';

/** The value of one sample (`name{labels}`), 0 when absent; labels in the order prom-client writes. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  const wanted = Object.entries(labels)
    .map(([key, value]) => `${key}="${value}"`)
    .join(',');
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([^}]*)\})? (\S+)$/.exec(line);
    if (match === null || match[1] !== name) continue;
    const present = match[3] ?? '';
    // Every wanted label must be there; others (an `le`, say) may be too.
    if (
      wanted === '' ? present === '' : wanted.split(',').every((pair) => present.includes(pair))
    ) {
      return Number(match[4]);
    }
  }
  return 0;
}

describe('GET /metrics', () => {
  let harness: ChatHarness;

  beforeAll(async () => {
    harness = await startChatHarness({
      dialect: allDialects[0]!,
      overrides: {
        rate_limits: {
          default_tier: 'test',
          tiers: {
            test: { per_minute: 100_000, per_day: 1_000_000 },
            tiny: { per_minute: 2, per_day: 100 },
          },
        },
      },
    });
    await harness.app.listen({ port: 0, host: '127.0.0.1' });
  });

  afterAll(async () => {
    await harness.close();
  });

  const scrape = async () => {
    const response = await harness.app.inject({
      method: 'GET',
      url: '/metrics',
      headers: bearer(harness.adminKey),
    });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    return response.body;
  };

  it("answers the Prometheus text with Node's own metrics, event-loop lag among them", async () => {
    const text = await scrape();
    expect(text).toContain('# TYPE nodejs_eventloop_lag_seconds gauge');
    expect(text).toContain('# TYPE process_resident_memory_bytes gauge');
    expect(text).toContain('# TYPE platform_http_requests_total counter');
    expect(text).toContain('# TYPE platform_http_request_duration_seconds histogram');
    expect(text).toContain('# TYPE platform_jobs_waiting gauge');
  });

  it('shows a blocked event loop in its lag, sampled every 100 ms to spare an idle process', async () => {
    await scrape(); // each scrape starts the delay's histogram afresh
    // After a reset the sampler's first firing records nothing: let it fire once before the block.
    await new Promise((resolve) => setTimeout(resolve, 250));
    const blockedUntil = Date.now() + 400;
    while (Date.now() < blockedUntil) {
      // The loop blocked, as a handler stuck on a regular expression would block it.
    }
    // The sampler's timer, due during the block, fires late; its delay lands in the histogram.
    await new Promise((resolve) => setTimeout(resolve, 250));
    expect(sample(await scrape(), 'nodejs_eventloop_lag_max_seconds')).toBeGreaterThan(0.2);
  });

  it('refuses a request without a key, and a key without admin', async () => {
    const anonymous = await harness.app.inject({ method: 'GET', url: '/metrics' });
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.json()).toMatchObject({ error: { code: 'missing_api_key' } });
    const reader = await createKey(harness.app, harness.adminKey, {
      name: 'reader',
      scopes: ['models:read', 'chat:write'],
    });
    const refused = await harness.app.inject({
      method: 'GET',
      url: '/metrics',
      headers: bearer(reader.key),
    });
    expect(refused.statusCode).toBe(403);
    expect(refused.json<{ error: { code: string } }>().error.code).toBe('insufficient_permissions');
    expect(refused.body).not.toContain('platform_http_requests_total');

    // The figures cover every account: another account's admin key is refused too.
    const other = await harness.app.inject({
      method: 'POST',
      url: '/v1/accounts',
      headers: bearer(harness.adminKey),
      payload: { name: 'Tenant' },
    });
    expect(other.statusCode, other.body).toBe(201);
    const tenantAdmin = await harness.app.inject({
      method: 'GET',
      url: '/metrics',
      headers: bearer(other.json<{ admin_key: string }>().admin_key),
    });
    expect(tenantAdmin.statusCode).toBe(403);
  });

  it('counts requests by route pattern and status, never by raw URL', async () => {
    const before = await scrape();
    const labels = { method: 'GET', route: '/v1/health', status: '200' };
    for (let index = 0; index < 3; index += 1) {
      expect((await harness.app.inject({ method: 'GET', url: '/v1/health' })).statusCode).toBe(200);
    }
    const missing = await harness.app.inject({
      method: 'GET',
      url: '/v1/agents/agt_doesnotexist123',
      headers: bearer(harness.adminKey),
    });
    expect(missing.statusCode).toBe(404);
    await harness.app.inject({ method: 'GET', url: '/no/such/path/at/all' });
    const after = await scrape();

    expect(sample(after, 'platform_http_requests_total', labels)).toBe(
      sample(before, 'platform_http_requests_total', labels) + 3,
    );
    expect(sample(after, 'platform_http_request_duration_seconds_count', labels)).toBe(
      sample(before, 'platform_http_request_duration_seconds_count', labels) + 3,
    );
    expect(
      sample(after, 'platform_http_requests_total', {
        route: '/v1/agents/:agent_id',
        status: '404',
      }),
    ).toBe(1);
    expect(
      sample(after, 'platform_http_requests_total', { route: 'unmatched', status: '404' }),
    ).toBeGreaterThanOrEqual(1);
    expect(after).not.toContain('agt_doesnotexist123');
    expect(after).not.toContain('/no/such/path');
  });

  it('records model latency, tokens and errors by catalog model name', async () => {
    const before = await scrape();
    const ok = await harness.app.inject({
      method: 'POST',
      url: '/v1/chat/completions',
      headers: bearer(harness.adminKey),
      payload: { model: 'fake-small', messages: [{ role: 'user', content: 'count these words' }] },
    });
    expect(ok.statusCode, ok.body).toBe(200);
    const usage = ok.json<{ usage: { prompt_tokens: number; completion_tokens: number } }>().usage;

    // A 400 from the upstream is not retried and has no fallback on fake-small.
    harness.upstream.enqueueFor('chat', { kind: 'error', status: 400 });
    const failed = await harness.app.inject({
      method: 'POST',
      url: '/v1/chat/completions',
      headers: bearer(harness.adminKey),
      payload: { model: 'fake-small', messages: [{ role: 'user', content: 'fail, please' }] },
    });
    expect(failed.statusCode).toBeGreaterThanOrEqual(400);
    const after = await scrape();

    const okLabels = { model: 'fake-small', kind: 'chat', outcome: 'ok' };
    expect(sample(after, 'platform_upstream_request_duration_seconds_count', okLabels)).toBe(
      sample(before, 'platform_upstream_request_duration_seconds_count', okLabels) + 1,
    );
    expect(
      sample(after, 'platform_upstream_tokens_total', { model: 'fake-small', type: 'prompt' }),
    ).toBe(
      sample(before, 'platform_upstream_tokens_total', { model: 'fake-small', type: 'prompt' }) +
        usage.prompt_tokens,
    );
    expect(
      sample(after, 'platform_upstream_tokens_total', { model: 'fake-small', type: 'completion' }),
    ).toBe(
      sample(before, 'platform_upstream_tokens_total', {
        model: 'fake-small',
        type: 'completion',
      }) + usage.completion_tokens,
    );
    expect(sample(after, 'platform_upstream_errors_total', { model: 'fake-small' })).toBe(
      sample(before, 'platform_upstream_errors_total', { model: 'fake-small' }) + 1,
    );
    // The upstream's own model id (gpt-4o-mini) is not a label: the catalog name is.
    expect(after).not.toMatch(/model="gpt-4o-mini"/);
  });

  it('counts rate-limit refusals', async () => {
    const tiny = await createKey(harness.app, harness.adminKey, {
      name: 'tiny',
      scopes: ['models:read'],
      tier: 'tiny',
    });
    const before = await scrape();
    const statuses: number[] = [];
    for (let index = 0; index < 4; index += 1) {
      const response = await harness.app.inject({
        method: 'GET',
        url: '/v1/models',
        headers: bearer(tiny.key),
      });
      statuses.push(response.statusCode);
    }
    expect(statuses).toEqual([200, 200, 429, 429]);
    const after = await scrape();
    expect(sample(after, 'platform_rate_limit_refusals_total', { route: '/v1/models' })).toBe(
      sample(before, 'platform_rate_limit_refusals_total', { route: '/v1/models' }) + 2,
    );
  });

  it('shows open WebSocket sessions and those accepted since start', async () => {
    const address = harness.app.server.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;
    const socket = await connect(`ws://127.0.0.1:${port}/v1/ws`, bearer(harness.adminKey));
    const open = await scrape();
    expect(sample(open, 'platform_websocket_sessions', { channel: 'realtime' })).toBe(1);
    expect(sample(open, 'platform_websocket_sessions_total', { channel: 'realtime' })).toBe(1);
    socket.close();
    await socket.closed;
    await expect
      .poll(async () =>
        sample(await scrape(), 'platform_websocket_sessions', { channel: 'realtime' }),
      )
      .toBe(0);
  });

  it('counts background runs by outcome, with their duration and the queue depth', async () => {
    const post = async (url: string, payload: object) => {
      const response = await harness.app.inject({
        method: 'POST',
        url,
        headers: bearer(harness.adminKey),
        payload,
      });
      expect(response.statusCode, response.body).toBeLessThan(300);
      return response.json<Record<string, unknown>>();
    };
    const before = await scrape();
    const completedBefore = sample(before, 'platform_jobs_total', {
      queue: 'pipeline-runs',
      outcome: 'completed',
    });
    const table = (await post('/v1/agents', {
      name: 'table',
      agent_type: 'StructureAgent',
      configuration: {},
    })) as { id: string };
    const { pipeline_id: pipelineId } = (await post('/v1/pipelines', {
      name: 'one stage',
      stages: [{ name: 'table', agent_id: table.id, input_mapping: { data: '$.input.rows' } }],
    })) as { pipeline_id: string };
    const run = (await post(`/v1/pipelines/${pipelineId}/execute`, {
      inputs: { rows: 'region,amount\nNorth,1' },
      async: true,
    })) as { execution_id: string };
    // The event stream ends when the run does.
    await harness.app.inject({
      method: 'GET',
      url: `/v1/executions/${run.execution_id}/events`,
      headers: bearer(harness.adminKey),
    });
    await expect
      .poll(async () =>
        sample(await scrape(), 'platform_jobs_total', {
          queue: 'pipeline-runs',
          outcome: 'completed',
        }),
      )
      .toBe(completedBefore + 1);
    const text = await scrape();
    expect(
      sample(text, 'platform_job_duration_seconds_count', {
        queue: 'pipeline-runs',
        outcome: 'completed',
      }),
    ).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'platform_jobs_waiting', { queue: 'pipeline-runs' })).toBe(0);
    expect(sample(text, 'platform_jobs_active', { queue: 'pipeline-runs' })).toBe(0);
  });

  it('is documented in the OpenAPI document as text/plain, for owner admin keys', async () => {
    const document = (await harness.app.inject({ method: 'GET', url: '/openapi.json' })).json<{
      paths: Record<string, Record<string, Record<string, unknown>>>;
    }>();
    const operation = document.paths['/metrics']?.get;
    expect(operation).toBeDefined();
    expect(JSON.stringify(operation?.responses)).toContain('text/plain');
  });
});

describe('METRICS_PORT', () => {
  it('serves /metrics on its own address without a key, and not on the API port', async () => {
    const harness = await startTestApp({
      dialect: allDialects[0]!,
      env: { METRICS_PORT: '9464' },
    });
    const server = await startMetricsServer(harness.services.metrics, '127.0.0.1', 0);
    try {
      expect(harness.services.config.metrics.port).toBe(9464);
      const onApi = await harness.app.inject({
        method: 'GET',
        url: '/metrics',
        headers: bearer(harness.adminKey),
      });
      expect(onApi.statusCode).toBe(404);

      await harness.app.inject({ method: 'GET', url: '/v1/health' });
      const response = await fetch(`http://127.0.0.1:${server.port}/metrics`);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
      const text = await response.text();
      expect(
        sample(text, 'platform_http_requests_total', { route: '/v1/health', status: '200' }),
      ).toBe(1);
      expect((await fetch(`http://127.0.0.1:${server.port}/other`)).status).toBe(404);
    } finally {
      await server.close();
      await harness.close();
    }
  });
});
