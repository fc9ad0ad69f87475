// A feature switched off in configuration switches its operations off: they answer 403
// feature_disabled (before any key is looked at), /v1/features says so, and the rest still works.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChatHarness, type ChatHarness } from '../support/chat-harness.js';
import { allDialects } from '../support/dialects.js';
import { bearer } from '../support/test-app.js';

interface ErrorJson {
  error: { message: string; type: string; code: string };
}

describe.each(allDialects)('feature switches ($name)', (dialect) => {
  let harness: ChatHarness;
  beforeAll(async () => {
    harness = await startChatHarness({
      dialect,
      overrides: {
        features: { semantic_search: false, agent_orchestration: false, multi_model_access: false },
      },
    });
  });
  afterAll(async () => {
    await harness.close();
  });

  const call = (method: 'GET' | 'POST', url: string, payload?: object, key?: string | null) =>
    harness.app.inject({
      method,
      url,
      headers: key === null ? {} : bearer(key ?? harness.adminKey),
      ...(payload === undefined ? {} : { payload }),
    });

  it('reports the switched-off features as disabled', async () => {
    const features = (await call('GET', '/v1/features')).json<{
      features: Array<{ id: string; enabled: boolean }>;
    }>().features;
    const enabled = Object.fromEntries(features.map((feature) => [feature.id, feature.enabled]));
    expect(enabled).toMatchObject({
      semantic_search: false,
      agent_orchestration: false,
      multi_model_access: false,
    });
  });

  it.each([
    ['GET', '/v1/knowledge-bases', 'semantic_search'],
    ['POST', '/v1/knowledge-bases', 'semantic_search'],
    ['GET', '/v1/agent-types', 'agent_orchestration'],
    ['GET', '/v1/agents', 'agent_orchestration'],
    ['POST', '/v1/pipelines', 'agent_orchestration'],
    ['GET', '/v1/executions/exec_123', 'agent_orchestration'],
  ] as const)('answers %s %s with 403 feature_disabled naming %s', async (method, url, feature) => {
    for (const key of [harness.adminKey, null]) {
      const response = await call(method, url, method === 'POST' ? { name: 'x' } : undefined, key);
      expect(response.statusCode).toBe(403);
      const { error } = response.json<ErrorJson>();
      expect(error).toMatchObject({ type: 'permission_error', code: 'feature_disabled' });
      expect(error.message).toContain(`features.${feature}`);
    }
  });

  it('keeps chat to the default model when multi_model_access is off', async () => {
    const turn = (model?: string) =>
      call('POST', '/v1/chat', {
        user_id: 'u',
        messages: [{ role: 'user', content: 'hello' }],
        ...(model === undefined ? {} : { model }),
      });
    expect((await turn()).statusCode).toBe(200);
    expect((await turn('fake-chat')).statusCode).toBe(200);
    const other = await turn('fake-backup');
    expect(other.statusCode).toBe(403);
    expect(other.json<ErrorJson>().error.code).toBe('feature_disabled');
  });

  it('leaves the other operations on', async () => {
    expect((await call('GET', '/v1/conversations?user_id=u')).statusCode).toBe(200);
    expect((await call('GET', '/v1/templates')).statusCode).toBe(200);
  });
});
