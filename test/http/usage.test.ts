// GET /v1/usage on every dialect: calls, tokens and model time from the usage ledger, per key, per
// model and per source, in time buckets; the recent activity (runs named, with their models);
// filters, bounds, and account isolation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allDialects } from '../support/dialects.js';
import { startChatHarness, type ChatHarness } from '../support/chat-harness.js';
import { bearer, createAccount, createKey } from '../support/test-app.js';

interface Figures {
  requests: number;
  failed: number;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  average_latency_ms: number | null;
  max_latency_ms: number | null;
}
interface UsageJson {
  bucket: string;
  buckets: string[];
  totals: Figures;
  points: (Figures & { start: string })[];
  by_key: { key_id: string | null; name: string | null; totals: Figures }[];
  by_model: { model: string | null; totals: Figures }[];
  by_source: { source: string; totals: Figures }[];
  recent_activity: {
    source: string;
    id: string;
    key_id: string | null;
    model: string | null;
    models: string[];
    agent_name: string | null;
    pipeline_name: string | null;
    calls: number;
    total_tokens: number;
    latency_ms: number | null;
  }[];
}

describe.each(allDialects)('usage on $name', (dialect) => {
  let harness: ChatHarness;
  let second: { id: string; key: string };
  const chatUsage: { prompt: number; completion: number }[] = [];
  let executionId = '';
  let writerId = '';

  beforeAll(async () => {
    harness = await startChatHarness({ dialect });
    second = await createKey(harness.app, harness.adminKey, {
      name: 'second',
      scopes: ['chat:write'],
    });
    const chat = async (key: string, content: string, model?: string) => {
      const response = await harness.app.inject({
        method: 'POST',
        url: '/v1/chat',
        headers: bearer(key),
        payload: {
          user_id: 'u1',
          messages: [{ role: 'user', content }],
          ...(model === undefined ? {} : { model }),
        },
      });
      expect(response.statusCode, response.body).toBe(200);
      const usage = response.json<{ usage: { prompt_tokens: number; completion_tokens: number } }>()
        .usage;
      chatUsage.push({ prompt: usage.prompt_tokens, completion: usage.completion_tokens });
    };
    await chat(harness.adminKey, 'first question');
    await chat(harness.adminKey, 'second question here');
    await chat(second.key, 'from the second key', 'fake-backup');
    const agent = await harness.app.inject({
      method: 'POST',
      url: '/v1/agents',
      headers: bearer(harness.adminKey),
      payload: {
        name: 'writer',
        agent_type: 'GenerationAgent',
        model_id: 'fake-chat',
        configuration: {},
      },
    });
    writerId = agent.json<{ id: string }>().id;
    const run = await harness.app.inject({
      method: 'POST',
      url: `/v1/agents/${writerId}/execute`,
      headers: bearer(harness.adminKey),
      payload: { query: 'write something' },
    });
    executionId = run.json<{ execution_id: string }>().execution_id;
  });
  afterAll(async () => {
    await harness.close();
  });

  const usage = (query = '', key = harness.adminKey) =>
    harness.app.inject({ method: 'GET', url: `/v1/usage${query}`, headers: bearer(key) });

  it('counts turns and executions per key, per model and per source', async () => {
    const response = await usage();
    expect(response.statusCode, response.body).toBe(200);
    const body = response.json<UsageJson>();
    const prompt = chatUsage.reduce((sum, item) => sum + item.prompt, 0);
    const completion = chatUsage.reduce((sum, item) => sum + item.completion, 0);
    // Three chat calls and the agent run's one model call.
    expect(body.totals.requests).toBe(4);
    const chatGroup = body.by_source.find((group) => group.source === 'chat');
    expect(chatGroup?.totals.prompt_tokens).toBe(prompt);
    expect(chatGroup?.totals.completion_tokens).toBe(completion);
    const agentGroup = body.by_source.find((group) => group.source === 'agent');
    expect(agentGroup?.totals.total_tokens).toBeGreaterThan(0);
    expect(body.totals.total_tokens).toBe(
      body.totals.prompt_tokens + body.totals.completion_tokens,
    );
    expect(body.totals.prompt_tokens).toBe(prompt + agentGroup!.totals.prompt_tokens);
    expect(body.totals.average_latency_ms).not.toBeNull();
    expect(body.bucket).toBe('day');
    expect(body.buckets.length).toBeGreaterThanOrEqual(7);
    expect(body.points.reduce((sum, point) => sum + point.requests, 0)).toBe(4);

    const secondGroup = body.by_key.find((group) => group.key_id === second.id);
    expect(secondGroup?.totals.requests).toBe(1);
    expect(secondGroup?.name).toBe('second');
    const adminGroup = body.by_key.find((group) => group.key_id !== second.id);
    expect(adminGroup?.totals.requests).toBe(3);

    const byModel = Object.fromEntries(
      body.by_model.map((group) => [group.model, group.totals.requests]),
    );
    expect(byModel).toEqual({ 'fake-chat': 3, 'fake-backup': 1 });
    const bySource = Object.fromEntries(
      body.by_source.map((group) => [group.source, group.totals.requests]),
    );
    expect(bySource).toEqual({ chat: 3, agent: 1 });
    expect(body.recent_activity).toHaveLength(4);
    // The run shows once, named, with the model its call used and that call's tokens.
    const run = body.recent_activity.find((item) => item.id === executionId);
    expect(run).toMatchObject({
      source: 'agent',
      agent_name: 'writer',
      model: 'fake-chat',
      models: ['fake-chat'],
      calls: 1,
      total_tokens: agentGroup!.totals.total_tokens,
    });
    // Its latency is its calls' model time, read from the ledger, not the run's wall time.
    const ledger = await harness.services.storage.db
      .selectFrom('usage_records')
      .select('latency_ms')
      .where('execution_id', '=', executionId)
      .execute();
    expect(ledger).toHaveLength(1);
    expect(run?.latency_ms).toBe(Number(ledger[0]!.latency_ms));
    const calls = body.recent_activity.filter((item) => item.source === 'chat');
    expect(calls.map((item) => item.model).sort()).toEqual([
      'fake-backup',
      'fake-chat',
      'fake-chat',
    ]);
  });

  it('filters by key and by model, and buckets by hour on request', async () => {
    const byKey = (await usage(`?key_id=${second.id}`)).json<UsageJson>();
    expect(byKey.totals.requests).toBe(1);
    const byModel = (await usage('?model=fake-backup')).json<UsageJson>();
    expect(byModel.totals.requests).toBe(1);
    // The activity list obeys the filter too: the one call to fake-backup, no run.
    expect(byModel.recent_activity.map((item) => item.model)).toEqual(['fake-backup']);
    const agentModel = (await usage('?model=fake-chat')).json<UsageJson>();
    expect(agentModel.recent_activity.map((item) => item.source).sort()).toEqual([
      'agent',
      'chat',
      'chat',
    ]);
    // Three hours ending a minute from now: four hourly buckets whatever the time of day (with
    // `from` three hours before now instead, the last minute of an hour made five).
    let end = Date.now() + 60_000;
    if (end % 3_600_000 === 0) end += 1;
    const to = new Date(end).toISOString();
    const from = new Date(end - 3 * 3_600_000).toISOString();
    const hourly = (await usage(`?from=${from}&to=${to}`)).json<UsageJson>();
    expect(hourly.bucket).toBe('hour');
    expect(hourly.buckets).toHaveLength(4);
    expect(hourly.points).toHaveLength(1);
    expect(hourly.points[0]?.start).toMatch(/T\d\d:00:00\.000Z$/);
    const empty = (
      await usage(`?from=2020-01-01T00:00:00Z&to=2020-01-02T00:00:00Z`)
    ).json<UsageJson>();
    expect(empty.totals.requests).toBe(0);
  });

  it('refuses bad ranges naming the parameter', async () => {
    const cases: [string, string][] = [
      ['?from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z', 'from'],
      ['?from=2026-01-01T00:00:00Z&to=2026-03-01T00:00:00Z&bucket=hour', 'bucket'],
      ['?from=2020-01-01T00:00:00Z&to=2026-01-01T00:00:00Z', 'from'],
      ['?bucket=week', 'bucket'],
      ['?from=yesterday', 'from'],
    ];
    for (const [query, param] of cases) {
      const response = await usage(query);
      expect(response.statusCode, query).toBe(400);
      expect(response.json<{ error: { param: string } }>().error.param, query).toBe(param);
    }
  });

  it('is for admin keys, and shows each account only its own usage', async () => {
    const refused = await usage('', second.key);
    expect(refused.statusCode).toBe(403);
    const other = await createAccount(harness.app, harness.adminKey, 'other');
    const theirs = (await usage('', other.admin_key)).json<UsageJson>();
    expect(theirs.totals.requests).toBe(0);
    expect(theirs.by_key).toEqual([]);
    expect(theirs.recent_activity).toEqual([]);
  });

  it('names a pipeline run in the recent activity, with the models of its stages', async () => {
    const created = await harness.app.inject({
      method: 'POST',
      url: '/v1/pipelines',
      headers: bearer(harness.adminKey),
      payload: {
        name: 'digest',
        stages: [{ name: 'write', agent_id: writerId, input_mapping: { query: '$.input.text' } }],
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    const run = await harness.app.inject({
      method: 'POST',
      url: `/v1/pipelines/${created.json<{ id: string }>().id}/execute`,
      headers: bearer(harness.adminKey),
      payload: { text: 'summarise this' },
    });
    expect(run.json<{ status: string }>().status, run.body).toBe('completed');
    const body = (await usage()).json<UsageJson>();
    const bySource = Object.fromEntries(
      body.by_source.map((group) => [group.source, group.totals.requests]),
    );
    expect(bySource.pipeline).toBe(1);
    const item = body.recent_activity.find(
      (entry) => entry.id === run.json<{ execution_id: string }>().execution_id,
    );
    expect(item).toMatchObject({
      source: 'pipeline',
      pipeline_name: 'digest',
      models: ['fake-chat'],
      calls: 1,
    });
  });
});
