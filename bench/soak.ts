// Benchmark: a soak — minutes of mixed traffic against the built service (`node dist/main.js`, a
// child process, real HTTP and WebSockets on loopback), its memory sampled every 10 s, to show
// that memory does not grow with traffic. The traffic: chat completions plain and streamed,
// stored chat turns plain and streamed (new and continued conversations), the general WebSocket
// /v1/ws (init, a text turn, a close — some cut mid-answer), voice sessions and their stream
// (silence, a typed turn, a spoken answer), knowledge ingest (documents added, the oldest deleted)
// and search, pipelines run synchronously and asynchronously with their event stream followed,
// refused and invalid requests, API keys created, used and revoked; and, from
// bench/soak-agents-and-dialects.ts, a ToolAgent whose tool comes from a real MCP server (a child
// process: the SDK's server over Streamable HTTP, allowed on loopback by
// tools.allowed_private_targets; the fake upstream calls the tool, then answers from its result),
// the platform's own MCP server at /mcp (handshake, tools/list, calls of an exposed agent and
// pipeline, a batch), OpenAI's Responses API and Anthropic's Messages API, each plain and
// streamed. Then the service is left idle for a minute, and a full GC is forced through the
// inspector (also at half-time and at the end of the traffic, the two points the plateau is
// judged on).
//
//   npm run bench -- soak                         6 minutes on SQLite
//   BENCH_SOAK_DB=postgres npm run bench -- soak  on PostgreSQL + Redis
//   BENCH_SOAK_SECONDS=600 …                      another length of traffic
//   BENCH_SOAK_SHORT=1 …                          60 s of traffic, 20 s idle, nothing written
//   BENCH_SOAK_SNAPSHOTS=1 …                      heap snapshots before and after, compared
//   BENCH_SOAK_SNAPSHOT_DIR=DIR …                 and kept in DIR (to open in DevTools)
//   BENCH_SOAK_ENTRY=DIR/main.js …                another build (scripts/build-server.mjs --outdir)
//
// Target: RSS on a plateau — growth over the last half of the traffic (after a full GC at
// half-time → after one at the end) under 5%.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import pg from 'pg';
import WebSocket from 'ws';
import { generateApiKey } from '../src/modules/accounts/api-key-format.js';
import { compareHeapSnapshots, summariseHeapSnapshot, type HeapGrowth } from './heap-snapshot.js';
import { InspectorClient, type MemoryUsage } from './inspector.js';
import { setUpToolTraffic, toolTraffic, type ToolFixtures } from './soak-agents-and-dialects.js';
import {
  benchUpstreamModel,
  freePort,
  machine,
  root,
  startServer,
  stopProcess,
  writeResults,
} from './support.js';

const short = process.env.BENCH_SOAK_SHORT === '1';
const trafficSeconds = Number(process.env.BENCH_SOAK_SECONDS ?? (short ? 60 : 360));
const idleSeconds = Number(process.env.BENCH_SOAK_IDLE_SECONDS ?? (short ? 20 : 60));
const sampleEveryMs = 10_000;
const workers = Number(process.env.BENCH_SOAK_WORKERS ?? 6);
const database = process.env.BENCH_SOAK_DB === 'postgres' ? 'postgres' : 'sqlite';
const snapshots = process.env.BENCH_SOAK_SNAPSHOTS === '1';
/** Where the snapshots are kept (for DevTools' comparison view); by default they are deleted. */
const snapshotDirectory = process.env.BENCH_SOAK_SNAPSHOT_DIR;
const postgresUrl =
  process.env.BENCH_POSTGRES_URL ?? `postgres://${userInfo().username}@127.0.0.1:5432/test`;
const redisUrl = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
/** Target: RSS grows less than this over the last half of the traffic. */
const plateauLimit = 0.05;
/** The built service (another build directory: `node scripts/build-server.mjs --outdir DIR`). */
const entry = process.env.BENCH_SOAK_ENTRY ?? 'dist/main.js';

const mib = (bytes: number) => Math.round((bytes / 2 ** 20) * 10) / 10;

/** Mulberry32: the same traffic every run. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}
const random = seededRandom(20_261_125);
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
const words =
  'alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu river stone cloud lamp table garden window market station'.split(
    ' ',
  );
const sentence = (length = 6 + Math.floor(random() * 10)) =>
  `${Array.from({ length }, () => pick(words)).join(' ')}.`;

interface Sample {
  t_s: number;
  /** `mid_gc` and `end_gc`: right after a full GC forced at half-time and at the end of traffic. */
  phase: 'start' | 'traffic' | 'mid_gc' | 'end_gc' | 'idle' | 'after_gc';
  rss_mib: number;
  /** RSS in anonymous pages (heaps, stacks) and in mapped files (code, the SQLite file). */
  rss_anon_mib: number;
  rss_file_mib: number;
  heap_used_mib: number;
  heap_total_mib: number;
  external_mib: number;
  array_buffers_mib: number;
  requests: number;
}

/** RssAnon and RssFile of a process, from /proc (Linux), in bytes. */
function residentParts(pid: number): { anon: number; file: number } {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const field = (name: string) =>
      Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN) * 1024;
    return { anon: field('RssAnon'), file: field('RssFile') };
  } catch {
    return { anon: Number.NaN, file: Number.NaN };
  }
}

function sampleOf(
  usage: MemoryUsage,
  parts: { anon: number; file: number },
  t: number,
  phase: Sample['phase'],
  requests: number,
): Sample {
  return {
    t_s: Math.round(t / 1000),
    phase,
    rss_mib: mib(usage.rss),
    rss_anon_mib: mib(parts.anon),
    rss_file_mib: mib(parts.file),
    heap_used_mib: mib(usage.heapUsed),
    heap_total_mib: mib(usage.heapTotal),
    external_mib: mib(usage.external),
    array_buffers_mib: mib(usage.arrayBuffers),
    requests,
  };
}

/** Counts per kind of traffic: done, and failed (an unexpected status or a broken exchange). */
const counts = new Map<string, { ok: number; failed: number; firstFailure?: string }>();
function count(kind: string, ok: boolean, failure?: string) {
  let entry = counts.get(kind);
  if (entry === undefined) {
    entry = { ok: 0, failed: 0 };
    counts.set(kind, entry);
  }
  if (ok) entry.ok += 1;
  else {
    entry.failed += 1;
    entry.firstFailure ??= failure;
  }
}
const totalRequests = () => [...counts.values()].reduce((sum, entry) => sum + entry.ok, 0);

class Client {
  constructor(
    readonly base: string,
    readonly key: string,
  ) {}

  async request(
    method: string,
    route: string,
    body?: unknown,
    key = this.key,
  ): Promise<{ status: number; text: string }> {
    const response = await fetch(`${this.base}${route}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(60_000),
    });
    return { status: response.status, text: await response.text() };
  }

  /** A request expected to answer `expected`; its JSON. */
  async expect(
    expected: number,
    method: string,
    route: string,
    body?: unknown,
    key = this.key,
  ): Promise<Record<string, unknown>> {
    const { status, text } = await this.request(method, route, body, key);
    if (status !== expected) {
      throw new Error(`${method} ${route} answered ${status}: ${text.slice(0, 200)}`);
    }
    return text === '' || !text.startsWith('{')
      ? {}
      : (JSON.parse(text) as Record<string, unknown>);
  }
}

/** Opens a WebSocket and collects its JSON messages; `next(type)` waits for one of a type. */
function openSocket(url: string, headers: Record<string, string> = {}) {
  return new Promise<{
    socket: WebSocket;
    next(type: string): Promise<Record<string, unknown>>;
    closed: Promise<number>;
  }>((resolve, reject) => {
    const socket = new WebSocket(url, { headers });
    const received: Record<string, unknown>[] = [];
    const waiters: { type: string; resolve: (message: Record<string, unknown>) => void }[] = [];
    socket.on('message', (data, isBinary) => {
      if (isBinary) return;
      const message = JSON.parse((data as Buffer).toString('utf8')) as Record<string, unknown>;
      const index = waiters.findIndex((waiter) => waiter.type === message.type);
      if (index === -1) received.push(message);
      else waiters.splice(index, 1)[0]!.resolve(message);
    });
    const closed = new Promise<number>((done) => socket.on('close', (code) => done(code)));
    socket.on('unexpected-response', (request, response) => {
      request.destroy();
      reject(new Error(`upgrade answered ${response.statusCode}`));
    });
    socket.on('error', reject);
    socket.on('open', () =>
      resolve({
        socket,
        closed,
        next(type) {
          const index = received.findIndex((message) => message.type === type);
          if (index !== -1) return Promise.resolve(received.splice(index, 1)[0]!);
          return new Promise((done, fail) => {
            const timer = setTimeout(
              () => fail(new Error(`no '${type}' message within 60 s`)),
              60_000,
            );
            waiters.push({
              type,
              resolve: (message) => {
                clearTimeout(timer);
                done(message);
              },
            });
            void closed.then((code) => {
              clearTimeout(timer);
              fail(new Error(`closed with ${code} before a '${type}' message`));
            });
          });
        },
      }),
    );
  });
}

/** The shared state of the traffic: the fixtures it made and the pools it draws from. */
interface Fixtures {
  client: Client;
  wsBase: string;
  knowledgeBaseId: string;
  pipelineId: string;
  documents: string[];
  conversations: { id: string; turns: number; using: number }[];
  tools: ToolFixtures;
}

const rows = [
  { region: 'North', amount: 120 },
  { region: 'South', amount: 80 },
  { region: 'East', amount: 40 },
];

/** Reads a text/event-stream answer to its end; the number of `data:` lines. */
async function readEventStream(response: Response): Promise<number> {
  const text = await response.text();
  return text.split('\n').filter((line) => line.startsWith('data:')).length;
}

/** The traffic through tools and the other dialects, on the same client and fixtures. */
const toolKinds = Object.entries(toolTraffic({ random, sentence })).map(
  ([kind, run]) => [kind, (fixtures: Fixtures) => run(fixtures.client, fixtures.tools)] as const,
);

const traffic: Record<string, (fixtures: Fixtures) => Promise<void>> = {
  ...Object.fromEntries(toolKinds),
  async chat({ client }) {
    await client.expect(200, 'POST', '/chat/completions', {
      model: 'bench-upstream',
      messages: [{ role: 'user', content: sentence() }],
    });
  },
  async 'chat-stream'({ client }) {
    const response = await fetch(`${client.base}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${client.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'bench-upstream',
        stream: true,
        stream_options: { include_usage: true },
        messages: [{ role: 'user', content: sentence(20) }],
      }),
      signal: AbortSignal.timeout(60_000),
    });
    if (response.status !== 200) throw new Error(`stream answered ${response.status}`);
    if ((await readEventStream(response)) < 2) throw new Error('stream without events');
  },
  async turn({ client, conversations }) {
    // Half the turns continue one of 20 conversations of user 'soak' (each retired after 10 turns
    // and deleted once no turn uses it); the others start a conversation and delete it.
    const live = conversations.filter((conversation) => conversation.turns < 10);
    if (live.length < 20 || random() < 0.5) {
      const answer = await client.expect(200, 'POST', '/v1/chat', {
        user_id: live.length < 20 ? 'soak' : `user-${Math.floor(random() * 500)}`,
        messages: [{ role: 'user', content: sentence() }],
      });
      if (typeof answer.message !== 'string') throw new Error('no message');
      const id = String(answer.conversation_id);
      if (live.length < 20) conversations.push({ id, turns: 1, using: 0 });
      else await client.expect(200, 'DELETE', `/v1/conversations/${id}`);
      return;
    }
    const conversation = pick(live);
    conversation.turns += 1;
    conversation.using += 1;
    try {
      await client.expect(200, 'POST', '/v1/chat', {
        user_id: 'soak',
        conversation_id: conversation.id,
        messages: [{ role: 'user', content: sentence() }],
      });
    } finally {
      conversation.using -= 1;
    }
    if (conversation.turns >= 10 && conversation.using === 0) {
      conversations.splice(conversations.indexOf(conversation), 1);
      await client.expect(200, 'DELETE', `/v1/conversations/${conversation.id}`);
    }
  },
  async 'turn-stream'({ client }) {
    const response = await fetch(`${client.base}/v1/chat`, {
      method: 'POST',
      headers: { authorization: `Bearer ${client.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        user_id: `user-${Math.floor(random() * 500)}`,
        stream: true,
        messages: [{ role: 'user', content: sentence(15) }],
      }),
      signal: AbortSignal.timeout(60_000),
    });
    if (response.status !== 200) throw new Error(`stream answered ${response.status}`);
    const text = await response.text();
    const id = /"conversation_id":"([^"]+)"/.exec(text)?.[1];
    if (id === undefined) throw new Error('stream without a conversation');
    await client.expect(200, 'DELETE', `/v1/conversations/${id}`);
  },
  async ws({ client, wsBase }) {
    const socket = await openSocket(`${wsBase}/v1/ws`, { authorization: `Bearer ${client.key}` });
    socket.socket.send(
      JSON.stringify({ type: 'init', user_id: `user-${Math.floor(random() * 500)}` }),
    );
    await socket.next('ready');
    socket.socket.send(JSON.stringify({ type: 'text', text: sentence(12) }));
    if (random() < 0.25) {
      // Hung up mid-answer.
      socket.socket.terminate();
      return;
    }
    const end = await socket.next('turn_end');
    // A bad message is answered with an error, the socket stays open.
    socket.socket.send('{"type":"nope"}');
    await socket.next('error');
    socket.socket.close();
    await socket.closed;
    await client.expect(200, 'DELETE', `/v1/conversations/${String(end.conversation_id)}`);
  },
  async voice({ client, wsBase }) {
    const session = await client.expect(201, 'POST', '/v1/voice/sessions', {
      user_id: `voice-${Math.floor(random() * 50)}`,
      stt_model: 'pocketsphinx-en-us',
      tts_model: 'espeak-ng',
      audio_format: 'wav',
    });
    const socket = await openSocket(
      `${wsBase}/v1/voice/stream/${String(session.session_id)}?token=${String(session.token)}`,
    );
    await socket.next('ready');
    // 400 ms of silence in 20 ms frames: the detector runs, no turn starts.
    for (let frame = 0; frame < 20; frame += 1) socket.socket.send(Buffer.alloc(640));
    socket.socket.send(JSON.stringify({ type: 'text', text: 'Say a short sentence.' }));
    const end = await socket.next('turn_end');
    socket.socket.close();
    await socket.closed;
    await client.expect(200, 'DELETE', `/v1/conversations/${String(end.conversation_id)}`);
  },
  async 'knowledge-ingest'({ client, knowledgeBaseId, documents }) {
    const sections = Array.from(
      { length: 3 },
      (_, index) =>
        `## Part ${index} ${pick(words)}\n\n${Array.from({ length: 8 }, () => sentence()).join(' ')}`,
    );
    const document = await client.expect(
      201,
      'POST',
      `/v1/knowledge-bases/${knowledgeBaseId}/documents`,
      {
        title: `Note ${sentence(3)}`,
        content_type: 'text/markdown',
        content: `# ${sentence(4)}\n\n${sections.join('\n\n')}\n`,
      },
    );
    documents.push(String(document.id));
    // A steady amount of data: the oldest documents go.
    while (documents.length > 100) {
      const oldest = documents.shift()!;
      await client.expect(
        200,
        'DELETE',
        `/v1/knowledge-bases/${knowledgeBaseId}/documents/${oldest}`,
      );
    }
  },
  async 'knowledge-search'({ client, knowledgeBaseId }) {
    const found = await client.expect(
      200,
      'POST',
      `/v1/knowledge-bases/${knowledgeBaseId}/search`,
      {
        query: `${pick(words)} ${pick(words)}${random() < 0.3 ? ' "OR' : ''}`,
        top_k: 5,
      },
    );
    if (!Array.isArray(found.results)) throw new Error('no results array');
  },
  async pipeline({ client, pipelineId }) {
    const run = await client.expect(200, 'POST', `/v1/pipelines/${pipelineId}/execute`, {
      rows,
      user_id: `user-${Math.floor(random() * 500)}`,
    });
    if (run.status !== 'completed') throw new Error(`run ${JSON.stringify(run).slice(0, 200)}`);
  },
  async 'pipeline-async'({ client, pipelineId }) {
    const run = await client.expect(202, 'POST', `/v1/pipelines/${pipelineId}/execute`, {
      rows,
      async: true,
    });
    const response = await fetch(
      `${client.base}/v1/executions/${String(run.execution_id)}/events`,
      { headers: { authorization: `Bearer ${client.key}` }, signal: AbortSignal.timeout(60_000) },
    );
    if (response.status !== 200) throw new Error(`events answered ${response.status}`);
    if ((await readEventStream(response)) < 1) throw new Error('no events');
  },
  async refused({ client }) {
    // Unmatched paths (each a new URL), an invalid body, an unknown model, a wrong key.
    await client.expect(404, 'GET', `/v1/nothing-here/${randomBytes(6).toString('hex')}`);
    await client.expect(400, 'POST', '/v1/chat', { user_id: 'x', messages: 'not a list' });
    await client.expect(400, 'POST', '/chat/completions', {
      model: `no-such-model-${Math.floor(random() * 1e6)}`,
      messages: [{ role: 'user', content: 'hi' }],
    });
    await client.expect(401, 'GET', '/v1/models', undefined, generateApiKey());
  },
  async tenant({ client, wsBase }) {
    // A key created, used over HTTP and WebSocket, then revoked.
    const created = await client.expect(201, 'POST', '/v1/api-keys', {
      name: `soak ${randomBytes(3).toString('hex')}`,
      scopes: ['chat:write', 'models:read'],
      tier: 'bench',
    });
    const key = String(created.key);
    for (let index = 0; index < 3; index += 1) {
      await client.expect(
        200,
        'POST',
        '/chat/completions',
        { model: 'bench-upstream', messages: [{ role: 'user', content: sentence() }] },
        key,
      );
    }
    const socket = await openSocket(`${wsBase}/v1/ws`, { authorization: `Bearer ${key}` });
    socket.socket.send(JSON.stringify({ type: 'init' }));
    await socket.next('ready');
    socket.socket.close();
    await socket.closed;
    await client.expect(200, 'DELETE', `/v1/api-keys/${String(created.id)}`);
    await client.expect(401, 'GET', '/v1/models', undefined, key);
  },
};

/** Each worker's round: the kinds of traffic in turn (voice and key churn less often). */
const round = [
  'chat',
  'chat-stream',
  'turn',
  'tool-agent',
  'ws',
  'knowledge-search',
  'responses',
  'pipeline',
  'mcp',
  'turn-stream',
  'messages',
  'knowledge-ingest',
  'chat',
  'responses-stream',
  'ws',
  'refused',
  'tool-agent',
  'pipeline-async',
  'messages-stream',
  'chat-stream',
  'mcp-batch',
  'knowledge-search',
  'voice',
  'responses-stored',
  'turn',
  'ws',
  'tenant',
];

async function worker(index: number, fixtures: Fixtures, deadline: number): Promise<void> {
  let step = index * 3;
  while (Date.now() < deadline) {
    const kind = round[step % round.length]!;
    step += 1;
    try {
      await traffic[kind]!(fixtures);
      count(kind, true);
    } catch (error) {
      count(kind, false, error instanceof Error ? error.message : String(error));
    }
  }
}

async function setUp(client: Client, base: string, mcpUrl: string): Promise<Fixtures> {
  const knowledgeBase = await client.expect(201, 'POST', '/v1/knowledge-bases', {
    name: 'soak',
    embedding_model: 'bench-embed',
  });
  const agent = await client.expect(201, 'POST', '/v1/agents', {
    name: 'table',
    agent_type: 'StructureAgent',
    configuration: {},
  });
  const stages = Array.from({ length: 3 }, (_, index) => ({
    name: `s${index}`,
    agent_id: agent.id,
    input_mapping: { data: index === 0 ? '$.input.rows' : `$.stages.s${index - 1}.rows` },
  }));
  const pipeline = await client.expect(201, 'POST', '/v1/pipelines', {
    name: 'soak',
    stages,
  });
  return {
    client,
    wsBase: base.replace(/^http/, 'ws'),
    knowledgeBaseId: String(knowledgeBase.id),
    pipelineId: String(pipeline.pipeline_id),
    documents: [],
    conversations: [],
    tools: await setUpToolTraffic(client, mcpUrl, String(pipeline.pipeline_id)),
  };
}

export interface SoakRun {
  database: 'sqlite' | 'postgres';
  when: string;
  command: string;
  traffic_seconds: number;
  idle_seconds: number;
  workers: number;
  rss_start_mib: number;
  rss_peak_first_half_mib: number;
  rss_peak_mib: number;
  /** After a full GC at half-time and at the end of the traffic: the plateau's two points. */
  rss_mid_gc_mib: number;
  rss_end_gc_mib: number;
  rss_anon_mid_gc_mib: number;
  rss_anon_end_gc_mib: number;
  rss_after_idle_mib: number;
  rss_after_gc_mib: number;
  heap_start_after_gc_mib: number;
  heap_mid_gc_mib: number;
  heap_end_gc_mib: number;
  heap_after_idle_gc_mib: number;
  /** Heap kept per exchange of the second half (heapUsed after GC, end minus half-time). */
  heap_bytes_per_exchange_second_half: number;
  growth_last_half: number;
  anon_growth_last_half: number;
  plateau: boolean | null;
  heap_growth: { whole_run: HeapGrowth[]; second_half: HeapGrowth[] } | null;
  requests: number;
  failed: number;
  traffic: Record<string, { ok: number; failed: number; firstFailure?: string }>;
  samples: Sample[];
}

export async function runSoakBenchmark(): Promise<void> {
  const directory = mkdtempSync(path.join(tmpdir(), 'bench-soak-'));
  const adminKey = generateApiKey();
  const servers: ChildProcess[] = [];
  let inspector: InspectorClient | undefined;
  const schema = `bench_soak_${randomBytes(4).toString('hex')}`;
  let schemaCreated = false;
  try {
    const upstreamPort = await freePort();
    const upstreamUrl = `http://127.0.0.1:${upstreamPort}/v1`;
    servers.push(
      await startServer(
        process.execPath,
        [
          '--import',
          'tsx',
          'bench/fake-upstream-server.ts',
          String(upstreamPort),
          '--call-offered-tools',
        ],
        {},
        path.join(directory, 'upstream.log'),
        `${upstreamUrl}/models`,
      ),
    );
    // The ToolAgent's MCP server (any answer of its URL means it listens).
    const mcpPort = await freePort();
    const mcpUrl = `http://127.0.0.1:${mcpPort}/mcp`;
    servers.push(
      await startServer(
        process.execPath,
        ['--import', 'tsx', 'bench/fake-mcp-server.ts', String(mcpPort)],
        {},
        path.join(directory, 'mcp.log'),
        mcpUrl,
      ),
    );
    const configFile = path.join(directory, 'platform.config.json');
    writeFileSync(
      configFile,
      JSON.stringify({
        default_model: 'bench-upstream',
        models: [
          benchUpstreamModel(upstreamUrl, 256),
          {
            name: 'bench-embed',
            type: 'embedding',
            provider: 'openai-compatible',
            model: 'text-embedding-3-small',
            base_url: upstreamUrl,
          },
          {
            name: 'espeak-ng',
            provider: 'espeak-ng',
            model: 'espeak-ng',
            type: 'speech',
            default_voice: 'en-us',
          },
          {
            name: 'pocketsphinx-en-us',
            provider: 'pocketsphinx',
            model: 'en-us',
            type: 'transcription',
          },
        ],
        rate_limits: {
          default_tier: 'bench',
          tiers: { bench: { per_minute: 1_000_000_000, per_day: 1_000_000_000 } },
        },
        // The ToolAgent's MCP server listens on loopback.
        tools: { allowed_private_targets: ['127.0.0.1'] },
      }),
    );
    const env: Record<string, string> = {
      PLATFORM_ADMIN_KEY: adminKey,
      PLATFORM_CONFIG: configFile,
      MODELS_DIR: path.join(directory, 'models'),
      MODEL_AUTO_PULL: 'false',
      LOG_LEVEL: 'warn',
    };
    if (database === 'postgres') {
      const admin = new pg.Client({ connectionString: postgresUrl });
      await admin.connect();
      await admin.query(`create schema ${schema}`);
      await admin.end();
      schemaCreated = true;
      const databaseUrl = new URL(postgresUrl);
      databaseUrl.searchParams.set('options', `-c search_path=${schema}`);
      env.DATABASE_URL = databaseUrl.toString();
      env.REDIS_URL = redisUrl;
    } else {
      env.DATABASE_URL = `sqlite:${path.join(directory, 'platform.db')}`;
    }
    const port = await freePort();
    const inspectPort = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const service = await startServer(
      process.execPath,
      [`--inspect=127.0.0.1:${inspectPort}`, entry],
      { ...env, PORT: String(port) },
      path.join(directory, 'service.log'),
      `${base}/v1/health`,
    );
    servers.push(service);
    inspector = await InspectorClient.connect(inspectPort);
    const client = new Client(base, adminKey);
    const fixtures = await setUp(client, base, mcpUrl);

    const samples: Sample[] = [];
    const started = Date.now();
    const take = async (phase: Sample['phase']) => {
      const sample = sampleOf(
        await inspector!.memoryUsage(),
        residentParts(service.pid!),
        Date.now() - started,
        phase,
        totalRequests(),
      );
      samples.push(sample);
      process.stdout.write(`${JSON.stringify(sample)}\n`);
      return sample;
    };

    // Before: settled after start, then a full GC for the heap's baseline.
    await new Promise((resolve) => setTimeout(resolve, 5000));
    const start = await take('start');
    await inspector.collectGarbage();
    const heapStart = (await inspector.memoryUsage()).heapUsed;
    const snapshotBefore = path.join(snapshotDirectory ?? directory, 'before.heapsnapshot');
    if (snapshots) await inspector.writeHeapSnapshot(snapshotBefore);

    process.stdout.write(
      `${database}: ${trafficSeconds} s of traffic from ${workers} clients, then ${idleSeconds} s idle…\n`,
    );
    const deadline = Date.now() + trafficSeconds * 1000;
    const running = Promise.all(
      Array.from({ length: workers }, (_, index) => worker(index, fixtures, deadline)),
    );
    const halfTime = Date.now() + (trafficSeconds * 1000) / 2;
    // At half-time and at the end of the traffic a full GC is forced before sampling: the two
    // points compare what the service keeps, not the garbage waiting for the collector (which
    // saws up and down by tens of MiB with the collector's timing).
    let mid: Sample | undefined;
    let heapMid = { heapUsed: 0, requests: 0 };
    const snapshotMid = path.join(snapshotDirectory ?? directory, 'mid.heapsnapshot');
    while (Date.now() < deadline) {
      await new Promise((resolve) =>
        setTimeout(resolve, Math.min(sampleEveryMs, deadline - Date.now())),
      );
      await take('traffic');
      if (mid === undefined && Date.now() >= halfTime) {
        await inspector.collectGarbage();
        mid = await take('mid_gc');
        heapMid = { heapUsed: (await inspector.memoryUsage()).heapUsed, requests: totalRequests() };
        // A snapshot costs the service hundreds of MiB that its allocator keeps: with snapshots,
        // RSS from here on is no longer the service's own.
        if (snapshots) await inspector.writeHeapSnapshot(snapshotMid);
      }
    }
    await running;
    await inspector.collectGarbage();
    const endGc = await take('end_gc');
    const heapEndTraffic = {
      heapUsed: (await inspector.memoryUsage()).heapUsed,
      requests: totalRequests(),
    };
    mid ??= endGc;
    const trafficSamples = samples.filter((sample) => sample.phase === 'traffic');
    const halfTimeS = (halfTime - started) / 1000;
    const firstHalf = trafficSamples.filter((sample) => sample.t_s <= halfTimeS);
    const peakFirstHalf = Math.max(...firstHalf.map((sample) => sample.rss_mib));
    const peak = Math.max(...trafficSamples.map((sample) => sample.rss_mib));
    const idleUntil = Date.now() + idleSeconds * 1000;
    while (Date.now() < idleUntil) {
      await new Promise((resolve) =>
        setTimeout(resolve, Math.min(sampleEveryMs, idleUntil - Date.now())),
      );
      await take('idle');
    }
    const afterIdle = samples.at(-1)!;
    await inspector.collectGarbage();
    const afterGc = await take('after_gc');
    const heapEnd = (await inspector.memoryUsage()).heapUsed;

    let heapGrowth: SoakRun['heap_growth'] = null;
    if (snapshots) {
      const snapshotAfter = path.join(snapshotDirectory ?? directory, 'after.heapsnapshot');
      await inspector.writeHeapSnapshot(snapshotAfter);
      process.stdout.write(
        `snapshots: ${[snapshotBefore, snapshotMid, snapshotAfter].map((file) => mib(statSync(file).size)).join(', ')} MiB; comparing…\n`,
      );
      const [before, middle, after] = [snapshotBefore, snapshotMid, snapshotAfter].map((file) =>
        summariseHeapSnapshot(file),
      );
      heapGrowth = {
        whole_run: compareHeapSnapshots(before!, after!, 12),
        second_half: compareHeapSnapshots(middle!, after!, 12),
      };
      process.stdout.write(`${JSON.stringify(heapGrowth, null, 1)}\n`);
    }

    const growth = (endGc.rss_mib - mid.rss_mib) / mid.rss_mib;
    const anonGrowth = (endGc.rss_anon_mib - mid.rss_anon_mib) / mid.rss_anon_mib;
    const failed = [...counts.values()].reduce((sum, entry) => sum + entry.failed, 0);
    const run: SoakRun = {
      database,
      when: new Date().toISOString(),
      command: `${database === 'postgres' ? 'BENCH_SOAK_DB=postgres ' : ''}${
        process.env.BENCH_SOAK_SECONDS === undefined ? '' : `BENCH_SOAK_SECONDS=${trafficSeconds} `
      }npm run bench -- soak`,
      traffic_seconds: trafficSeconds,
      idle_seconds: idleSeconds,
      workers,
      rss_start_mib: start.rss_mib,
      rss_peak_first_half_mib: peakFirstHalf,
      rss_peak_mib: peak,
      rss_mid_gc_mib: mid.rss_mib,
      rss_end_gc_mib: endGc.rss_mib,
      rss_anon_mid_gc_mib: mid.rss_anon_mib,
      rss_anon_end_gc_mib: endGc.rss_anon_mib,
      rss_after_idle_mib: afterIdle.rss_mib,
      rss_after_gc_mib: afterGc.rss_mib,
      heap_start_after_gc_mib: mib(heapStart),
      heap_mid_gc_mib: mib(heapMid.heapUsed),
      heap_end_gc_mib: mib(heapEndTraffic.heapUsed),
      heap_after_idle_gc_mib: mib(heapEnd),
      heap_bytes_per_exchange_second_half: Math.round(
        (heapEndTraffic.heapUsed - heapMid.heapUsed) /
          Math.max(1, heapEndTraffic.requests - heapMid.requests),
      ),
      growth_last_half: Math.round(growth * 1000) / 1000,
      anon_growth_last_half: Math.round(anonGrowth * 1000) / 1000,
      // Not judged with snapshots: taking one inflates RSS.
      plateau: snapshots ? null : growth < plateauLimit,
      requests: totalRequests(),
      failed,
      traffic: Object.fromEntries(counts),
      samples,
      heap_growth: heapGrowth,
    };
    report(run);
    if (run.plateau === false || failed > 0) process.exitCode = 1;
  } catch (error) {
    // The service's own account of what went wrong, before its directory goes.
    try {
      const log = readFileSync(path.join(directory, 'service.log'), 'utf8');
      process.stderr.write(`service log (last 4,000 characters):\n${log.slice(-4000)}\n`);
    } catch {
      // No log.
    }
    throw error;
  } finally {
    inspector?.close();
    for (const server of servers.reverse()) await stopProcess(server);
    if (schemaCreated) {
      const cleaner = new pg.Client({ connectionString: postgresUrl });
      await cleaner.connect();
      await cleaner.query(`drop schema if exists ${schema} cascade`);
      await cleaner.end();
    }
    rmSync(directory, { recursive: true, force: true });
  }
}

function runMarkdown(run: SoakRun): string {
  const traffic = Object.entries(run.traffic)
    .map(
      ([kind, entry]) =>
        `| ${kind} | ${entry.ok} | ${entry.failed}${entry.firstFailure === undefined ? '' : ` (${entry.firstFailure.replaceAll('|', '/')})`} |`,
    )
    .join('\n');
  const samples = run.samples
    .map(
      (sample) =>
        `| ${sample.t_s} | ${sample.phase} | ${sample.rss_mib} | ${sample.rss_anon_mib} | ${sample.rss_file_mib} | ${sample.heap_used_mib} | ${sample.heap_total_mib} | ${sample.external_mib} | ${sample.requests} |`,
    )
    .join('\n');
  const table = (
    rows: HeapGrowth[],
  ) => `| kind | count before | count after | KiB before | KiB after |
|---|---:|---:|---:|---:|
${rows
  .map(
    (row) =>
      `| \`${row.name.replaceAll('|', '/').replaceAll('`', "'")}\` | ${row.countBefore} | ${row.countAfter} | ${Math.round(row.bytesBefore / 1024)} | ${Math.round(row.bytesAfter / 1024)} |`,
  )
  .join('\n')}`;
  const growth =
    run.heap_growth === null
      ? ''
      : `
Heap snapshots (each after a full GC), by kind of object, the groups whose self size grew most.
From before the traffic to after the idle minute (what first use loads, and any leak):

${table(run.heap_growth.whole_run)}

From half-time to after the idle minute (what the second half of the traffic left behind):

${table(run.heap_growth.second_half)}
`;
  const pct = (value: number) => `${(value * 100).toFixed(1)}%`;
  const verdict =
    run.plateau === null
      ? 'not judged (heap snapshots were taken, and a snapshot inflates RSS)'
      : run.plateau
        ? 'yes'
        : '**no**';
  return `## ${run.database === 'postgres' ? 'PostgreSQL + Redis' : 'SQLite'} — ${run.when}

\`${run.command}\`: ${run.traffic_seconds} s of traffic from ${run.workers} concurrent clients
(${run.requests} exchanges, ${run.failed} failed), then ${run.idle_seconds} s idle and a forced full GC.

| RSS (MiB) | start | peak by half-time | peak | half-time, after GC | end of traffic, after GC | after idle | after idle and GC |
|---|---:|---:|---:|---:|---:|---:|---:|
| all | ${run.rss_start_mib} | ${run.rss_peak_first_half_mib} | ${run.rss_peak_mib} | ${run.rss_mid_gc_mib} | ${run.rss_end_gc_mib} | ${run.rss_after_idle_mib} | ${run.rss_after_gc_mib} |
| of it anonymous | | | | ${run.rss_anon_mid_gc_mib} | ${run.rss_anon_end_gc_mib} | | |

| heap used after GC (MiB) | start | half-time | end of traffic | after idle | kept per exchange, second half |
|---|---:|---:|---:|---:|---:|
| | ${run.heap_start_after_gc_mib} | ${run.heap_mid_gc_mib} | ${run.heap_end_gc_mib} | ${run.heap_after_idle_gc_mib} | ${run.heap_bytes_per_exchange_second_half} bytes |

RSS growth over the last half (after GC at half-time → after GC at the end): **${pct(run.growth_last_half)}**
(anonymous memory: ${pct(run.anon_growth_last_half)}). Plateau (under ${plateauLimit * 100}%): ${verdict}.

| traffic | done | failed (first failure) |
|---|---:|---:|
${traffic}

| t (s) | phase | RSS | anonymous | file-backed | heap used | heap total | external | exchanges so far |
|---:|---|---:|---:|---:|---:|---:|---:|---:|
${samples}
${growth}`;
}

function report(run: SoakRun): void {
  const markdownOfRun = runMarkdown(run);
  if (short) {
    process.stdout.write(`\n${markdownOfRun}\n(short mode: nothing written to bench/results)\n`);
    return;
  }
  // One file for both databases: this run replaces its database's previous one.
  let previous: { runs?: Partial<Record<SoakRun['database'], SoakRun>> } = {};
  try {
    previous = JSON.parse(readFileSync(path.join(root, 'bench/results/soak.json'), 'utf8')) as {
      runs?: Partial<Record<SoakRun['database'], SoakRun>>;
    };
  } catch {
    // No earlier result.
  }
  const runs = { ...previous.runs, [run.database]: run };
  const info = machine();
  const json = { benchmark: 'soak', machine: info, plateau_limit: plateauLimit, runs };
  const markdown = `# Soak

\`npm run bench -- soak\` (SQLite) and \`BENCH_SOAK_DB=postgres npm run bench -- soak\` (PostgreSQL +
Redis) · ${info.cpus} cores (${info.cpu_model}), Node ${info.node}. The built service
(\`dist/main.js\`, started with \`--inspect\` on loopback so that the bench can read
\`process.memoryUsage()\` and force a full GC), the fake OpenAI-compatible upstream, an MCP server
and the clients each run in their own process. Every client takes the same round in turn: chat completions plain
and streamed; stored chat turns plain and streamed (half continue one of 20 conversations, each
deleted after 10 turns; the others start a conversation and delete it); the general WebSocket (init,
a text turn, an error, a close — a quarter hung up mid-answer); a voice session and its stream
(silence frames, a typed turn, an answer spoken by eSpeak NG); knowledge documents added (the
oldest deleted beyond 100) and searched (hybrid, embeddings from the fake upstream); a three-stage
pipeline run synchronously and asynchronously with its event stream followed; refused requests
(unmatched URLs, invalid bodies, unknown models, wrong keys); an API key created, used over HTTP
and WebSocket, then revoked; a ToolAgent whose tool source is a real MCP server (the official SDK's
server over Streamable HTTP with sessions, on loopback; the fake upstream calls
its \`echo\` tool, then answers from the result); the platform's own MCP server at \`/mcp\` (the
handshake, \`tools/list\`, \`tools/call\` of an exposed agent and of the exposed pipeline, and a
batch of four); OpenAI's Responses API plain (not stored) and streamed (stored or not), and a stored
chain of two read back and deleted; Anthropic's Messages API plain and streamed. The data stay about
the same size (conversations, stored responses and documents are deleted), except the records that
are kept by design (usage, executions, revoked keys).

Memory is sampled every ${sampleEveryMs / 1000} s. At half-time and at the end of the traffic a full GC is forced
before sampling, so that the two points compare what the service keeps rather than garbage waiting
for the collector (between collections RSS saws up and down by tens of MiB). The GC is the main
thread's: the worker threads' heaps (audio, text) count in the anonymous RSS with whatever garbage
they hold. Target: RSS on a plateau — under ${plateauLimit * 100}% growth from the first point to the second.

${(['sqlite', 'postgres'] as const)
  .map((name) => runs[name])
  .filter((entry): entry is SoakRun => entry !== undefined)
  .map(runMarkdown)
  .join('\n')}`;
  const file = writeResults('soak', json, markdown);
  process.stdout.write(`\n${markdownOfRun}\nwritten to ${file}\n`);
}
