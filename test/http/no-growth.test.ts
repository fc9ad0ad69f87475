// Memory that must not grow with traffic (issue 17), over HTTP: keys presented once each (tenants'
// keys, keys since revoked) are not kept in the key cache once their cache time has passed —
// counted, not timed. (Each cached key also pinned an 8 KiB Buffer pool slab through its 32-byte
// digest; the soak benchmark's heap snapshots showed it. The in-memory rate limiter keeps each
// key's day window for the day, by design.) And a ToolAgent run with an MCP tool source leaves
// nothing behind: weighed on the heap after a forced GC, per run, against a budget (a ratio, not a
// time), in two windows of three. Each run kept its SDK Client, ~27 KB, for good: the SDK
// leaves its abort listener on a request's signal, and Node keeps an `AbortSignal.any` signal with a
// listener alive.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChatHarness, type ChatHarness } from '../support/chat-harness.js';
import { allDialects } from '../support/dialects.js';
import { startStreamableServer, type TestMcpServer } from '../support/mcp-test-servers.js';
import { bearer, createKey, startTestApp, type TestApp } from '../support/test-app.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
// The optimising compiler's code and its deoptimisations, and bytecode flushed then compiled again,
// are heap that comes and goes with the JIT's moods, not with what the service keeps: with them a
// window of 300 runs still read up to 5 KiB per run after 650 runs. Without them (this file has its
// process to itself: vitest.config.ts, cleanProcessFiles) the heap settles after 100 runs, to a few
// hundred bytes per run, and a window of 100 runs weighs what a run leaves behind. The code run is
// the same, interpreted and baseline-compiled; what it keeps reachable does not depend on the tier.
setFlagsFromString('--no-opt');
setFlagsFromString('--no-flush-bytecode');

/** heapUsed after full collections (two: the first may leave finalised objects for the second). */
function settledHeap(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

describe.each(allDialects)('keys presented once leave nothing cached ($name)', (dialect) => {
  let harness: TestApp;
  const keys: string[] = [];

  beforeAll(async () => {
    harness = await startTestApp({ dialect });
    for (let index = 0; index < 200; index += 1) {
      keys.push((await createKey(harness.app, harness.adminKey, { scopes: ['models:read'] })).key);
    }
  }, 120_000);
  afterAll(() => harness.close());

  const use = async (key: string) => {
    const response = await harness.app.inject({
      method: 'GET',
      url: '/v1/models',
      headers: bearer(key),
    });
    expect(response.statusCode).toBe(200);
  };

  it('drops keys past their cache time at the next lookup', async () => {
    for (const key of keys) await use(key);
    expect(harness.services.authenticator.cachedKeyCount).toBeGreaterThan(0);
    // Past the cache's time (500 ms by default) and the purge's interval (1 s), the next lookup
    // drops what went stale: before, stale keys stayed until 50,000 others pushed them out.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    await use(harness.adminKey);
    expect(harness.services.authenticator.cachedKeyCount).toBeLessThanOrEqual(1);
  });
});

describe.each(allDialects)(
  'ToolAgent runs with an MCP tool source leave nothing behind ($name)',
  (dialect) => {
    let harness: ChatHarness;
    let mcp: TestMcpServer;
    let agentId = '';

    beforeAll(async () => {
      mcp = await startStreamableServer();
      harness = await startChatHarness({
        dialect,
        overrides: { tools: { allowed_private_targets: ['127.0.0.1'] } },
      });
      const created = await harness.app.inject({
        method: 'POST',
        url: '/v1/agents',
        headers: bearer(harness.adminKey),
        payload: {
          name: 'echoer',
          agent_type: 'ToolAgent',
          configuration: { tools: [{ type: 'mcp', name: 'demo', url: mcp.url }] },
        },
      });
      expect(created.statusCode, created.body).toBe(201);
      agentId = created.json<{ id: string }>().id;
    });
    afterAll(async () => {
      await harness.close();
      await mcp.close();
    });

    /** One run: the model calls the MCP server's `echo`, reads its answer, and answers. */
    const run = async () => {
      harness.upstream.enqueueFor(
        'chat',
        {
          kind: 'reply',
          toolCalls: [{ id: 'e1', name: 'demo__echo', arguments: '{"text":"hi"}' }],
        },
        { kind: 'reply', content: 'It said hi.' },
      );
      const response = await harness.app.inject({
        method: 'POST',
        url: `/v1/agents/${agentId}/execute`,
        headers: bearer(harness.adminKey),
        payload: { query: 'Say hi' },
      });
      expect(response.json<{ success: boolean }>().success, response.body).toBe(true);
      // The fakes' own records are not the service's memory.
      harness.upstream.reset();
      mcp.requests.length = 0;
    };

    /** Heap per run over `runs` runs, after a forced GC. */
    const perRun = async (runs: number) => {
      const before = settledHeap();
      for (let index = 0; index < runs; index += 1) await run();
      return (settledHeap() - before) / runs;
    };

    // 400 runs: a fixed amount of work, which a loaded machine may take a while to do (the
    // assertion counts bytes, not time).
    it(
      'keeps no heap per run: under 6 KiB in two of three windows of 100 runs',
      {
        timeout: 300_000,
      },
      async () => {
        // Warm-up: everything loaded on first use (the SDK, statements), the tool list cached, and
        // the baseline compiler's code made (3 KiB per run over runs 50–100, then ~0).
        for (let index = 0; index < 100; index += 1) await run();
        // A run's leak shows in every window; what comes and goes (a buffer filled then flushed, a
        // connection closed) weighs on one window, either way: the middle of three sets it aside, be
        // it heap that comes (once the least of three did, against the JIT's growth) or heap that
        // goes (which in the least of three could hide a leak).
        const windows = [await perRun(100), await perRun(100), await perRun(100)];
        console.log('heap per ToolAgent run with an MCP source', windows.map(Math.round));
        // With each run's SDK Client kept by its signal this was 25–30 KiB in every window.
        expect(windows.sort((a, b) => a - b)[1]).toBeLessThan(6 * 1024);
        // Every session was ended at the server (its DELETE), none left open.
        expect(mcp.requests).toEqual([]);
      },
    );
  },
);
