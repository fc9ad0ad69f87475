// References across accounts, with two accounts on every dialect: an agent cannot name another
// account's knowledge base, runs cannot name another account's (or user's) conversation, and a
// public agent's detail shown to another account leaves out its owner's private configuration.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChatHarness, type ChatHarness } from '../support/chat-harness.js';
import { allDialects } from '../support/dialects.js';
import { bearer, createAccount } from '../support/test-app.js';

interface ErrorJson {
  error: { message: string; type: string; code: string; param: string | null };
}

describe.each(allDialects)('references across accounts on $name', (dialect) => {
  let harness: ChatHarness;
  /** The owner account's admin key, and another account's. */
  let mine = '';
  let theirs = '';
  let myKnowledgeBase = '';
  let theirKnowledgeBase = '';
  let myConversation = '';
  let theirConversation = '';

  const call = (
    key: string,
    method: 'GET' | 'POST' | 'PATCH' | 'PUT',
    url: string,
    payload?: unknown,
  ) =>
    harness.app.inject({
      method,
      url,
      headers: bearer(key),
      ...(payload === undefined ? {} : { payload: payload as object }),
    });

  async function created(key: string, url: string, body: Record<string, unknown>) {
    const response = await call(key, 'POST', url, body);
    expect(response.statusCode, response.body).toBe(201);
    return response.json<{ id: string; pipeline_id?: string }>();
  }

  const executionCount = async (key: string, pipelineId: string) =>
    (await call(key, 'GET', `/v1/pipelines/${pipelineId}/executions`)).json<{ total: number }>()
      .total;

  beforeAll(async () => {
    harness = await startChatHarness({ dialect });
    mine = harness.adminKey;
    theirs = (await createAccount(harness.app, mine, `other-${dialect.name}`)).admin_key;
    myKnowledgeBase = (await created(mine, '/v1/knowledge-bases', { name: 'Mine' })).id;
    theirKnowledgeBase = (await created(theirs, '/v1/knowledge-bases', { name: 'Theirs' })).id;
    myConversation = (await created(mine, '/v1/conversations', { user_id: 'alice' })).id;
    theirConversation = (await created(theirs, '/v1/conversations', { user_id: 'alice' })).id;
  });
  afterAll(async () => {
    await harness.close();
  });

  it("answers 404 for another account's knowledge base in knowledge_base_ids, at create and update", async () => {
    const refused = await call(mine, 'POST', '/v1/agents', {
      name: 'finder',
      agent_type: 'RetrievalAgent',
      configuration: { knowledge_base_ids: [myKnowledgeBase, theirKnowledgeBase] },
    });
    expect(refused.statusCode, refused.body).toBe(404);
    expect(refused.json<ErrorJson>().error).toMatchObject({
      code: 'not_found',
      type: 'not_found_error',
      param: 'configuration.knowledge_base_ids[1]',
    });
    expect(refused.json<ErrorJson>().error.message).toContain(theirKnowledgeBase);

    const agent = await created(mine, '/v1/agents', {
      name: 'finder',
      agent_type: 'RetrievalAgent',
      configuration: { knowledge_base_ids: [myKnowledgeBase] },
    });
    for (const method of ['PATCH', 'PUT'] as const) {
      const update = await call(mine, method, `/v1/agents/${agent.id}`, {
        configuration: { knowledge_base_ids: [theirKnowledgeBase] },
      });
      expect(update.statusCode, update.body).toBe(404);
      expect(update.json<ErrorJson>().error.param).toBe('configuration.knowledge_base_ids[0]');
    }
    const unknown = await call(mine, 'PATCH', `/v1/agents/${agent.id}`, {
      configuration: { knowledge_base_ids: ['kb_doesnotexist'] },
    });
    expect(unknown.statusCode).toBe(404);
    // Nothing was changed by the refused updates.
    const stored = (await call(mine, 'GET', `/v1/agents/${agent.id}`)).json<{
      configuration: { knowledge_base_ids: string[] };
    }>();
    expect(stored.configuration.knowledge_base_ids).toEqual([myKnowledgeBase]);
  });

  it("answers 404 for another account's conversation_id on agent and pipeline runs, recording nothing", async () => {
    const agent = await created(mine, '/v1/agents', {
      name: 'table',
      agent_type: 'StructureAgent',
      configuration: {},
    });
    const pipeline = await created(mine, '/v1/pipelines', {
      name: 'one stage',
      stages: [{ name: 'table', agent_id: agent.id, input_mapping: { data: '$.input.rows' } }],
    });
    const pipelineId = pipeline.pipeline_id!;
    const rows = 'a,b\n1,2';
    const runs = [
      [`/v1/agents/${agent.id}/execute`, { data: rows }],
      [`/v1/pipelines/${pipelineId}/execute`, { rows }],
      [`/v1/pipelines/${pipelineId}/execute`, { rows, async: true }],
    ] as const;
    for (const [url, body] of runs) {
      const refused = await call(mine, 'POST', url, {
        ...body,
        conversation_id: theirConversation,
      });
      expect(refused.statusCode, `${url} ${refused.body}`).toBe(404);
      expect(refused.json<ErrorJson>().error).toMatchObject({ code: 'not_found' });
      expect(refused.json<ErrorJson>().error.message).toContain(theirConversation);
      // Another user's conversation of the same account is as invisible, when user_id is given.
      const otherUser = await call(mine, 'POST', url, {
        ...body,
        conversation_id: myConversation,
        user_id: 'bob',
      });
      expect(otherUser.statusCode, url).toBe(404);
    }
    expect(await executionCount(mine, pipelineId)).toBe(0);

    for (const [url, body] of runs) {
      const accepted = await call(mine, 'POST', url, {
        ...body,
        conversation_id: myConversation,
        user_id: 'alice',
      });
      expect(accepted.statusCode, accepted.body).toBeLessThan(300);
      const id = accepted.json<{ execution_id: string }>().execution_id;
      const record = (await call(mine, 'GET', `/v1/executions/${id}`)).json<{
        execution: { conversation_id: string; user_id: string };
      }>().execution;
      expect(record).toMatchObject({ conversation_id: myConversation, user_id: 'alice' });
    }
    await harness.services.pipelineRunner.close();
  });

  it("shows another account's public agent without the owner's knowledge bases and instructions", async () => {
    const configuration = {
      knowledge_base_ids: [myKnowledgeBase],
      result_count: 3,
      instructions: 'Internal: escalate to the on-call team at extension 4411.',
    };
    const agent = await created(mine, '/v1/agents', {
      name: 'public finder',
      agent_type: 'RetrievalAgent',
      configuration,
      is_public: true,
    });
    const own = (await call(mine, 'GET', `/v1/agents/${agent.id}`)).json<Record<string, unknown>>();
    expect(own).toMatchObject({ owned: true, configuration });
    expect(own).not.toHaveProperty('hidden_configuration_keys');

    const shown = await call(theirs, 'GET', `/v1/agents/${agent.id}`);
    expect(shown.statusCode).toBe(200);
    const detail = shown.json<{
      owned: boolean;
      configuration: Record<string, unknown>;
      hidden_configuration_keys: string[];
    }>();
    expect(detail.owned).toBe(false);
    expect(detail.configuration).toEqual({ result_count: 3, min_score: 0, answer: true });
    expect(detail.hidden_configuration_keys.sort()).toEqual(['instructions', 'knowledge_base_ids']);
    expect(shown.body).not.toContain(myKnowledgeBase);
    expect(shown.body).not.toContain('4411');

    const generation = await created(mine, '/v1/agents', {
      name: 'public writer',
      agent_type: 'GenerationAgent',
      configuration: { style: 'plain', instructions: 'Mention our Q3 numbers.' },
      is_public: true,
    });
    const writer = (await call(theirs, 'GET', `/v1/agents/${generation.id}`)).json<{
      configuration: Record<string, unknown>;
      hidden_configuration_keys: string[];
    }>();
    expect(writer.configuration).toMatchObject({ style: 'plain' });
    expect(writer.configuration).not.toHaveProperty('instructions');
    expect(writer.hidden_configuration_keys).toEqual(['instructions']);
  });
});
