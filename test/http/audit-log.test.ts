// The audit log over real HTTP on both databases: every administrative change — keys, accounts,
// budgets, routing policies and feedback, agents, pipelines, knowledge bases and documents, tool
// call approvals and rejections, logins, failed logins and logouts — leaves its record with the
// right actor, target and changes; no secret appears in any answer; an account sees only its own
// records and the owner's admin sees all; filters, paging and bad filters; and every route that
// changes state is either audited or listed as not administrative.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditRules, notAudited } from '../../src/http/audit-rules.js';
import { allRecords, auditPage, recordOf, type AuditRecordJson } from '../support/audit.js';
import { startChatHarness, upstreamSecret, type ChatHarness } from '../support/chat-harness.js';
import { allDialects } from '../support/dialects.js';
import { bearer, createAccount, createKey } from '../support/test-app.js';

const host = '127.0.0.1:8080';

describe.each(allDialects)('the audit log on $name', (dialect) => {
  let harness: ChatHarness;
  /** Account A: its id and admin key; every change below is made in it. */
  let tenant: { id: string; admin_key: string; admin_key_id: string };
  /** Every key value this suite saw: none may appear in an audit answer. */
  const secrets: string[] = [];

  const call = (
    method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE',
    url: string,
    payload?: object,
  ) =>
    harness.app.inject({
      method,
      url,
      headers: bearer(tenant.admin_key),
      ...(payload === undefined ? {} : { payload }),
    });

  const created = async (url: string, payload: object) => {
    const response = await call('POST', url, payload);
    expect(response.statusCode, response.body).toBe(201);
    return response.json<{ id: string }>().id;
  };

  const record = async (action: string, targetId: string | null) => {
    const found = await recordOf(harness.app, tenant.admin_key, action, targetId);
    expect(found, `${action} ${targetId ?? ''}`).toBeDefined();
    return found!;
  };

  /** A record made by the tenant's admin key (no session) from the test's address. */
  const byAdminKey = (found: AuditRecordJson) => {
    expect(found.account_id).toBe(tenant.id);
    expect(found.actor).toEqual({
      kind: 'key',
      key_id: tenant.admin_key_id,
      session: null,
      user: null,
    });
    expect(found.ip).toBe('127.0.0.1');
    expect(found.hash).toMatch(/^[0-9a-f]{64}$/);
  };

  beforeAll(async () => {
    harness = await startChatHarness({
      dialect,
      overrides: { sessions: { login_attempts_per_minute: 1000 } },
    });
    tenant = await createAccount(harness.app, harness.adminKey, 'Audited');
    secrets.push(harness.adminKey, tenant.admin_key, upstreamSecret);
  });
  afterAll(async () => {
    await harness?.close();
  });

  it('records account creation in the owner’s chain and the first key in the new account’s', async () => {
    const owner = await recordOf(harness.app, harness.adminKey, 'account.create', tenant.id);
    expect(owner).toMatchObject({
      target: { type: 'account', id: tenant.id },
      changes: { before: null, after: { name: 'Audited', admin_key_id: tenant.admin_key_id } },
      actor: { kind: 'key' },
    });
    expect(owner!.account_id).not.toBe(tenant.id);
    const firstKey = await record('api_key.create', tenant.admin_key_id);
    expect(firstKey.seq).toBe(1);
    expect(firstKey.prev_hash).toBe('0'.repeat(64));
    expect(firstKey.changes?.after).toMatchObject({ name: 'Audited admin key', scopes: ['admin'] });
  });

  it('records a key created and revoked with its name, scopes and limits, never the key', async () => {
    const key = await createKey(harness.app, tenant.admin_key, {
      name: 'reporting',
      scopes: ['chat:write', 'models:read'],
      allowed_ips: ['10.0.0.0/8', '127.0.0.1/32'],
    });
    secrets.push(key.key);
    const creation = await record('api_key.create', key.id);
    byAdminKey(creation);
    expect(creation.changes).toEqual({
      before: null,
      after: {
        name: 'reporting',
        scopes: ['chat:write', 'models:read'],
        tier: key.tier,
        allowed_ips: ['10.0.0.0/8', '127.0.0.1/32'],
        expires_at: null,
        revoked_at: null,
      },
    });
    expect((await call('DELETE', `/v1/api-keys/${key.id}`)).statusCode).toBe(200);
    const revocation = await record('api_key.revoke', key.id);
    byAdminKey(revocation);
    expect(revocation.changes?.before).toEqual({ revoked_at: null });
    expect(revocation.changes?.after?.revoked_at).toEqual(expect.any(String));
  });

  it('records budgets created, changed and deleted with the changed fields before and after', async () => {
    const id = await created('/v1/budgets', { scope: 'account', limit_usd: 10, period: 'month' });
    expect((await record('budget.create', id)).changes?.after).toMatchObject({
      scope: 'account',
      limit_usd: 10,
      period: 'month',
      soft_limit_usd: null,
    });
    const patched = await call('PATCH', `/v1/budgets/${id}`, { limit_usd: 25, soft_limit_usd: 20 });
    expect(patched.statusCode, patched.body).toBe(200);
    const update = await record('budget.update', id);
    byAdminKey(update);
    expect(update.changes).toEqual({
      before: { limit_usd: 10, soft_limit_usd: null },
      after: { limit_usd: 25, soft_limit_usd: 20 },
    });
    expect((await call('DELETE', `/v1/budgets/${id}`)).statusCode).toBe(200);
    const deletion = await record('budget.delete', id);
    expect(deletion.changes?.after).toBeNull();
    expect(deletion.changes?.before).toMatchObject({ limit_usd: 25, period: 'month' });
  });

  it('records routing policies and the router taught by feedback', async () => {
    const id = await created('/v1/routing/policies', {
      name: 'short answers',
      actions: { max_tokens: 100 },
    });
    expect((await record('routing_policy.create', id)).changes?.after).toMatchObject({
      name: 'short answers',
      actions: { max_tokens: 100 },
    });
    expect((await call('PATCH', `/v1/routing/policies/${id}`, { enabled: false })).statusCode).toBe(
      200,
    );
    expect((await record('routing_policy.update', id)).changes).toEqual({
      before: { enabled: true },
      after: { enabled: false },
    });
    expect((await call('DELETE', `/v1/routing/policies/${id}`)).statusCode).toBe(200);
    expect((await record('routing_policy.delete', id)).changes?.before).toMatchObject({
      name: 'short answers',
    });
    const agentId = await created('/v1/agents', {
      name: 'billing desk',
      agent_type: 'GenerationAgent',
      configuration: {},
    });
    const taught = await call('POST', '/v1/routing/feedback', {
      message: 'I was charged twice this month',
      selected_route: agentId,
    });
    expect(taught.statusCode, taught.body).toBe(200);
    const feedbackId = taught.json<{ feedback_id: string }>().feedback_id;
    expect((await record('routing_feedback.create', feedbackId)).changes?.after).toMatchObject({
      route_type: 'agent',
      route_id: agentId,
    });
  });

  it('records agents created, changed (PATCH and PUT) and deleted', async () => {
    const id = await created('/v1/agents', {
      name: 'summariser',
      agent_type: 'GenerationAgent',
      configuration: { instructions: 'Be brief.' },
    });
    expect((await record('agent.create', id)).changes?.after).toMatchObject({
      name: 'summariser',
      agent_type: 'GenerationAgent',
      configuration: { instructions: 'Be brief.' },
    });
    expect((await call('PATCH', `/v1/agents/${id}`, { name: 'digest' })).statusCode).toBe(200);
    expect((await record('agent.update', id)).changes).toEqual({
      before: { name: 'summariser' },
      after: { name: 'digest' },
    });
    expect((await call('PUT', `/v1/agents/${id}`, { is_public: true })).statusCode).toBe(200);
    const updates = (await allRecords(harness.app, tenant.admin_key, 'action=agent.update')).filter(
      (found) => found.target.id === id,
    );
    expect(updates.map((found) => found.changes)).toEqual([
      { before: { is_public: false }, after: { is_public: true } },
      { before: { name: 'summariser' }, after: { name: 'digest' } },
    ]);
    expect((await call('DELETE', `/v1/agents/${id}`)).statusCode).toBe(200);
    expect((await record('agent.delete', id)).changes?.before).toMatchObject({ name: 'digest' });
  });

  it('records pipelines created, changed and deleted', async () => {
    const agentId = await created('/v1/agents', {
      name: 'stage agent',
      agent_type: 'GenerationAgent',
      configuration: {},
    });
    const stages = [
      { name: 'write', agent_id: agentId, input_mapping: { query: '$.input.query' } },
    ];
    const id = await created('/v1/pipelines', { name: 'writer', stages });
    expect((await record('pipeline.create', id)).changes?.after).toMatchObject({ name: 'writer' });
    expect(
      (await call('PATCH', `/v1/pipelines/${id}`, { description: 'Writes things.' })).statusCode,
    ).toBe(200);
    expect((await record('pipeline.update', id)).changes).toEqual({
      before: { description: '' },
      after: { description: 'Writes things.' },
    });
    expect((await call('DELETE', `/v1/pipelines/${id}`)).statusCode).toBe(200);
    expect((await record('pipeline.delete', id)).changes?.before).toMatchObject({ name: 'writer' });
  });

  it('records knowledge bases and their documents added and deleted', async () => {
    const id = await created('/v1/knowledge-bases', { name: 'Handbook', embedding_model: null });
    expect((await record('knowledge_base.create', id)).changes?.after).toMatchObject({
      name: 'Handbook',
    });
    const documentId = await created(`/v1/knowledge-bases/${id}/documents`, {
      title: 'Refunds',
      content: 'Refunds are paid within 14 days.',
    });
    expect((await record('knowledge_document.create', documentId)).changes?.after).toMatchObject({
      knowledge_base_id: id,
      title: 'Refunds',
    });
    const removed = await call('DELETE', `/v1/knowledge-bases/${id}/documents/${documentId}`);
    expect(removed.statusCode, removed.body).toBe(200);
    await record('knowledge_document.delete', documentId);
    expect((await call('DELETE', `/v1/knowledge-bases/${id}`)).statusCode).toBe(200);
    expect((await record('knowledge_base.delete', id)).changes?.before).toMatchObject({
      name: 'Handbook',
    });
  });

  it('records approvals and rejections of tool calls, without the approver’s arguments', async () => {
    const kbId = await created('/v1/knowledge-bases', { name: 'Policies', embedding_model: null });
    const agentId = await created('/v1/agents', {
      name: 'careful',
      agent_type: 'ToolAgent',
      configuration: {
        tools: [
          {
            type: 'knowledge_search',
            name: 'policies',
            knowledge_base_ids: [kbId],
            requires_approval: true,
          },
        ],
      },
    });
    const paused = async () => {
      harness.upstream.enqueueFor('chat', {
        kind: 'reply',
        toolCalls: [{ id: 'call_1', name: 'policies', arguments: '{"query":"refunds"}' }],
      });
      const response = await call('POST', `/v1/agents/${agentId}/execute`, { query: 'Refunds?' });
      const body = response.json<{ status: string; execution_id: string }>();
      expect(body.status, response.body).toBe('waiting_for_approval');
      return body.execution_id;
    };
    const first = await paused();
    harness.upstream.enqueueFor('chat', { kind: 'reply', content: 'Done.' });
    const approved = await call('POST', `/v1/executions/${first}/approve`, {
      arguments: { query: 'confidential-argument-value' },
    });
    expect(approved.statusCode, approved.body).toBe(200);
    // The approved run goes on in the background and takes 'Done.' from the fake model: its events
    // end with its end, before the second run asks the model (which would otherwise take its
    // answer first, on a loaded machine).
    await call('GET', `/v1/executions/${first}/events`);
    const approval = await record('execution.approve', first);
    byAdminKey(approval);
    expect(approval.changes?.after).toMatchObject({
      decision: 'approved',
      arguments_replaced: true,
    });
    expect(JSON.stringify(approval)).not.toContain('confidential-argument-value');
    const second = await paused();
    const rejected = await call('POST', `/v1/executions/${second}/reject`, { reason: 'Not now.' });
    expect(rejected.statusCode, rejected.body).toBe(200);
    expect((await record('execution.reject', second)).changes?.after).toMatchObject({
      decision: 'rejected',
      reason: 'Not now.',
    });
    // A decision refused (already decided) changes nothing and is not recorded.
    expect((await call('POST', `/v1/executions/${second}/reject`, {})).statusCode).toBe(409);
    const rejections = await allRecords(harness.app, tenant.admin_key, 'action=execution.reject');
    expect(rejections.filter((found) => found.target.id === second)).toHaveLength(1);
  });

  it('records logins, failed logins (in the key’s account, or the owner’s) and logouts', async () => {
    const key = await createKey(harness.app, tenant.admin_key, {
      name: 'dashboard',
      scopes: ['admin'],
    });
    secrets.push(key.key);
    const login = await harness.app.inject({
      method: 'POST',
      url: '/v1/auth/login',
      headers: { host },
      payload: { api_key: key.key },
    });
    expect(login.statusCode, login.body).toBe(200);
    const session = login.json<{ session: { id: string; csrf_token: string } }>().session;
    const cookie = /platform_session=([^;]+)/.exec(String(login.headers['set-cookie']))?.[1] ?? '';
    secrets.push(cookie, session.csrf_token);
    const loggedIn = await record('auth.login', session.id);
    expect(loggedIn.actor).toEqual({ kind: 'key', key_id: key.id, session: null, user: null });
    // A change made through the session names the session as well as its key.
    const budget = await harness.app.inject({
      method: 'POST',
      url: '/v1/budgets',
      headers: {
        host,
        cookie: `platform_session=${cookie}`,
        'x-csrf-token': session.csrf_token,
        origin: `http://${host}`,
      },
      payload: { scope: 'key', key_id: key.id, limit_usd: 5, period: 'day' },
    });
    expect(budget.statusCode, budget.body).toBe(201);
    expect((await record('budget.create', budget.json<{ id: string }>().id)).actor).toEqual({
      kind: 'session',
      key_id: key.id,
      session: session.id,
      user: null,
    });
    const logout = await harness.app.inject({
      method: 'POST',
      url: '/v1/auth/logout',
      headers: {
        host,
        cookie: `platform_session=${cookie}`,
        'x-csrf-token': session.csrf_token,
        origin: `http://${host}`,
      },
    });
    expect(logout.statusCode, logout.body).toBe(200);
    expect((await record('auth.logout', session.id)).actor).toMatchObject({ session: session.id });

    // A revoked key's failed login lands in its account, naming the key.
    expect((await call('DELETE', `/v1/api-keys/${key.id}`)).statusCode).toBe(200);
    const refused = await harness.app.inject({
      method: 'POST',
      url: '/v1/auth/login',
      headers: { host },
      payload: { api_key: key.key },
    });
    expect(refused.statusCode).toBe(401);
    const failures = await allRecords(harness.app, tenant.admin_key, 'action=auth.login_failed');
    expect(failures[0]).toMatchObject({
      account_id: tenant.id,
      actor: { kind: 'key', key_id: key.id },
      changes: { before: null, after: { reason: 'revoked_api_key' } },
    });
    // An unknown key's lands in the owner's account, with no actor and nothing of the key.
    const unknownKey = `sk-${'Z'.repeat(46)}`;
    secrets.push(unknownKey);
    const unknown = await harness.app.inject({
      method: 'POST',
      url: '/v1/auth/login',
      headers: { host },
      payload: { api_key: unknownKey },
    });
    expect(unknown.statusCode).toBe(401);
    const ownerFailures = await allRecords(
      harness.app,
      harness.adminKey,
      'action=auth.login_failed',
    );
    expect(ownerFailures[0]).toMatchObject({
      actor: { kind: 'anonymous', key_id: null },
      changes: { after: { reason: 'invalid_api_key' } },
    });
    expect(ownerFailures[0]!.account_id).not.toBe(tenant.id);
  });

  it('shows an account only its own records; the owner’s admin sees every account’s', async () => {
    const other = await createAccount(harness.app, harness.adminKey, 'Elsewhere');
    secrets.push(other.admin_key);
    const theirs = await allRecords(harness.app, other.admin_key);
    expect(theirs.length).toBeGreaterThan(0);
    expect(theirs.every((found) => found.account_id === other.id)).toBe(true);
    const forbidden = await harness.app.inject({
      method: 'GET',
      url: `/v1/audit-log?account_id=${tenant.id}`,
      headers: bearer(other.admin_key),
    });
    expect(forbidden.statusCode).toBe(403);
    expect(forbidden.json()).toMatchObject({
      error: { code: 'insufficient_permissions', param: 'account_id' },
    });
    const nonAdmin = await createKey(harness.app, tenant.admin_key, { scopes: ['agents:write'] });
    secrets.push(nonAdmin.key);
    const refused = await harness.app.inject({
      method: 'GET',
      url: '/v1/audit-log',
      headers: bearer(nonAdmin.key),
    });
    expect(refused.statusCode).toBe(403);
    const all = await allRecords(harness.app, harness.adminKey);
    const accounts = new Set(all.map((found) => found.account_id));
    expect(accounts.has(tenant.id) && accounts.has(other.id)).toBe(true);
    const narrowed = await allRecords(harness.app, harness.adminKey, `account_id=${tenant.id}`);
    expect(narrowed.length).toBe((await allRecords(harness.app, tenant.admin_key)).length);
    expect(narrowed.every((found) => found.account_id === tenant.id)).toBe(true);
  });

  it('filters by action, target type and time, pages newest first, and refuses bad filters', async () => {
    const all = await allRecords(harness.app, tenant.admin_key);
    const seqs = all.map((found) => found.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => b - a));
    expect(new Set(seqs).size).toBe(seqs.length);
    const page = await auditPage(harness.app, tenant.admin_key, 'limit=3&offset=2');
    expect(page.records.map((found) => found.id)).toEqual(all.slice(2, 5).map((found) => found.id));
    expect(page).toMatchObject({ total: all.length, limit: 3, offset: 2, has_more: true });
    const budgets = await allRecords(harness.app, tenant.admin_key, 'target_type=budget');
    expect(budgets.length).toBeGreaterThanOrEqual(4);
    expect(budgets.every((found) => found.target.type === 'budget')).toBe(true);
    const creations = await allRecords(harness.app, tenant.admin_key, 'action=budget.create');
    expect(creations.every((found) => found.action === 'budget.create')).toBe(true);
    const middle = all[Math.floor(all.length / 2)]!;
    const since = await allRecords(
      harness.app,
      tenant.admin_key,
      `from=${encodeURIComponent(middle.at)}`,
    );
    expect(since.every((found) => found.at >= middle.at)).toBe(true);
    expect(since.map((found) => found.id)).toContain(middle.id);
    const before = await allRecords(
      harness.app,
      tenant.admin_key,
      `to=${encodeURIComponent(middle.at)}`,
    );
    expect(before.every((found) => found.at < middle.at)).toBe(true);
    expect(since.length + before.length).toBe(all.length);
    for (const [query, param] of [
      ['action=Budget.Create', 'action'],
      ['target_type=' + 'x'.repeat(65), 'target_type'],
      ['from=yesterday', 'from'],
      [`from=2030-01-02T00:00:00Z&to=2030-01-01T00:00:00Z`, 'from'],
      ['limit=1000', 'limit'],
    ] as const) {
      const response = await harness.app.inject({
        method: 'GET',
        url: `/v1/audit-log?${query}`,
        headers: bearer(tenant.admin_key),
      });
      expect(response.statusCode, query).toBe(400);
      expect(response.json(), query).toMatchObject({
        error: { type: 'invalid_request_error', code: 'invalid_parameter', param },
      });
    }
  });

  it('never answers a secret: no key, key hash, session cookie or provider key in any record', async () => {
    const hashes = await harness.services.storage.db
      .selectFrom('api_keys')
      .select('key_hash')
      .execute();
    const sessionHashes = await harness.services.storage.db
      .selectFrom('sessions')
      .select('token_hash')
      .execute();
    const answer = JSON.stringify(await allRecords(harness.app, harness.adminKey));
    expect(answer.length).toBeGreaterThan(1000);
    const forbidden = [
      ...secrets,
      ...hashes.map((row) => row.key_hash),
      ...sessionHashes.map((row) => row.token_hash),
    ];
    expect(forbidden.length).toBeGreaterThan(8);
    for (const secret of forbidden) expect(answer).not.toContain(secret);
  });

  it('audits every route that changes state, or lists why it does not', async () => {
    const document = (await harness.app.inject({ method: 'GET', url: '/openapi.json' })).json<{
      paths: Record<string, Record<string, unknown>>;
    }>();
    const unclassified: string[] = [];
    for (const [path, operations] of Object.entries(document.paths)) {
      for (const method of Object.keys(operations)) {
        if (!['post', 'put', 'patch', 'delete'].includes(method)) continue;
        const route = `${method.toUpperCase()} ${path.replaceAll(/\{([^}]+)\}/g, ':$1')}`;
        if (!auditRules.has(route) && !Object.hasOwn(notAudited, route)) unclassified.push(route);
      }
    }
    expect(unclassified).toEqual([]);
    // And every rule names a route that exists.
    const routes = new Set(
      Object.entries(document.paths).flatMap(([path, operations]) =>
        Object.keys(operations).map(
          (method) => `${method.toUpperCase()} ${path.replaceAll(/\{([^}]+)\}/g, ':$1')}`,
        ),
      ),
    );
    expect([...auditRules.keys()].filter((route) => !routes.has(route))).toEqual([]);
  });
});
