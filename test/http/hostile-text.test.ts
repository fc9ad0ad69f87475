// Client Markdown and HTML that used to hold the event loop for seconds or minutes, or crash the
// request (issue 17, item 2), replayed on both dialects over a real port: layouts, knowledge
// documents of each content type, and the WebAgent reading pages from a local server. Each answer
// is the contract's (the work done, or a 400 naming the field once the text workers' deadline or a
// documented limit is reached), and the loop's longest block during it is compared with a control
// request of the same endpoint and size (ordinary prose) measured in the same run.
//
// What no database touches is asked on one dialect only (SQLite, always there): layouts, the
// refusal a count decides and the text workers' queue run in the text threads and answer before
// any storage, so a second dialect would repeat them and prove nothing new. Each refusal at a
// deadline costs a thread's deadline and its replacement, so no input is refused twice for one check.
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allDialects } from '../support/dialects.js';
import {
  allowedBlockMs,
  measureLoopBlock,
  type LoopBlock,
  remeasured,
} from '../support/loop-block.js';
import { bearer, startTestApp, type TestApp } from '../support/test-app.js';
import { startTestServer, type TestServer } from '../support/web-servers.js';

const sentence =
  'The quick brown fox jumps over the lazy dog while the committee reviews the quarterly budget. ';

/** Ordinary prose of exactly `length` characters, in paragraphs. */
function proseOfLength(length: number): string {
  const paragraph = `${sentence.repeat(5)}\n\n`;
  return paragraph.repeat(Math.ceil(length / paragraph.length)).slice(0, length);
}

/** Ordinary HTML of about `length` characters: headed sections of paragraphs. */
function htmlProseOfLength(length: number): string {
  const section = `<h2>Section</h2><p>${sentence.repeat(4)}</p><p>${sentence.repeat(4)}</p>`;
  return `<html><head><title>Control</title></head><body>${section.repeat(Math.ceil(length / section.length))}</body></html>`;
}

/** The parts of the answers these tests read. */
interface Body {
  id?: string;
  title?: string;
  chunk_count?: number;
  success?: boolean;
  error?: { message: string; type: string; code: string; param: string | null };
  layout?: { components: { type: string }[] };
  result?: { pages: { title: string; text: string }[] };
  results?: { title: string; text: string }[];
}

interface Answer {
  status: number;
  json: Body;
}

type Probe = LoopBlock<Answer>;

/** The contract's refusal of text the workers could not read in time, or of a documented limit. */
function expectRefusal(answer: Answer, param: string, pattern: RegExp): void {
  expect(answer.status, JSON.stringify(answer.json).slice(0, 300)).toBe(400);
  expect(answer.json.error).toMatchObject({
    type: 'invalid_request_error',
    code: 'invalid_parameter',
    param,
  });
  expect(answer.json.error!.message).toMatch(pattern);
}

const tooSlow = /took longer than \d+ ms/;

describe.each(allDialects)('hostile client text on $name', remeasured, (dialect) => {
  let service: TestApp;
  let baseUrl: string;
  /** The text that no database touches is read on the first dialect only (see the header). */
  const textOnly = dialect === allDialects[0];
  let pages: TestServer;
  const served = new Map<string, string>();

  const post = async (path: string, body: unknown, origin = baseUrl): Promise<Answer> => {
    const response = await fetch(`${origin}${path}`, {
      method: 'POST',
      headers: { ...bearer(service.adminKey), 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: response.status, json: (await response.json()) as Body };
  };
  const probe = (path: string, body: unknown, origin = baseUrl): Promise<Probe> =>
    measureLoopBlock(() => post(path, body, origin));
  /** Asserts the hostile request held the loop no longer than the control allows, and logs both. */
  const expectNoLongerBlock = (label: string, control: Probe, hostile: Probe) => {
    console.log(
      `${dialect.name} ${label}: control ${control.maxBlockMs.toFixed(1)} ms (${control.result.status}), hostile ${hostile.maxBlockMs.toFixed(1)} ms (${hostile.result.status}), gc ${hostile.maxGcMs.toFixed(1)} ms`,
    );
    expect(hostile.maxBlockMs).toBeLessThan(allowedBlockMs(control.maxBlockMs, hostile));
  };

  let knowledgeBaseId = '';
  const addDocument = (content: string, contentType: string, origin = baseUrl) =>
    probe(
      `/v1/knowledge-bases/${knowledgeBaseId}/documents`,
      { content, content_type: contentType },
      origin,
    );
  let webAgentId = '';
  const readPages = (...paths: string[]) =>
    probe(`/v1/agents/${webAgentId}/execute`, {
      urls: paths.map((path) => `${pages.origin}${path}`),
    });

  beforeAll(async () => {
    pages = await startTestServer((request, response) => {
      const body = served.get(request.url.pathname);
      if (body === undefined) {
        response.writeHead(404);
        response.end();
        return;
      }
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      response.end(body);
    });
    service = await startTestApp({
      dialect,
      overrides: {
        web: { allowed_private_targets: [`127.0.0.1:${pages.port}`] },
        // Shorter deadlines than the defaults (2 s + 6 s per MiB): what they cut is the same,
        // the suite waits less for it.
        text: { timeout_ms: 1000, timeout_ms_per_mib: 3000 },
      },
    });
    await service.app.listen({ host: '127.0.0.1', port: 0 });
    baseUrl = `http://127.0.0.1:${(service.app.server.address() as AddressInfo).port}`;
    const kb = await post('/v1/knowledge-bases', { name: 'hostile', embedding_model: null });
    expect(kb.status).toBe(201);
    knowledgeBaseId = kb.json.id!;
    const agent = await post('/v1/agents', {
      name: 'reader',
      agent_type: 'WebAgent',
      configuration: { max_page_chars: 5000 },
    });
    expect(agent.status).toBe(201);
    webAgentId = agent.json.id!;
    // The text threads start on first use: that is not what the probes measure.
    expect((await post('/v1/layout', { message: '# Warm\n\nup' })).status).toBe(200);
  });
  afterAll(async () => {
    await service?.close();
    await pages?.close();
  });

  if (textOnly) {
    describe('layouts (POST /v1/layout)', () => {
      it.each([
        ['"*a_" x 1,000 (3 KB)', '*a_'.repeat(1000)],
        ['"*a_" x 4,000 (12 KB)', '*a_'.repeat(4000)],
        ['"<!--" x 24,900', '<!--'.repeat(24_900)],
        ['"a <!--" x 24,900', `a ${'<!--'.repeat(24_900)}`],
      ])('lays out or refuses %s without holding the loop', async (label, message) => {
        const control = await probe('/v1/layout', { message: proseOfLength(message.length) });
        expect(control.result.status).toBe(200);
        const hostile = await probe('/v1/layout', { message });
        if (hostile.result.status === 200) {
          expect(hostile.result.json.layout!.components.length).toBeGreaterThan(0);
        } else {
          expectRefusal(hostile.result, 'message', tooSlow);
        }
        expectNoLongerBlock(`layout ${label}`, control, hostile);
      });

      it('refuses "*a_" x 33,000 (99 KB) with a 400 naming the field, without holding the loop', async () => {
        const message = '*a_'.repeat(33_000);
        const control = await probe('/v1/layout', { message: proseOfLength(message.length) });
        expect(control.result.status).toBe(200);
        const hostile = await probe('/v1/layout', { message });
        expectRefusal(hostile.result, 'message', tooSlow);
        expectNoLongerBlock('layout "*a_" x 33,000 (99 KB)', control, hostile);
        // A worker that was stopped at its deadline is replaced: the next layout works.
        const after = await post('/v1/layout', { message: '## Next\n\n- one\n- two' });
        expect(after.status).toBe(200);
        expect(after.json.layout!.components.map((component) => component.type)).toEqual([
          'heading',
          'list',
        ]);
      });
    });
  }

  describe('knowledge documents (POST /v1/knowledge-bases/{id}/documents)', () => {
    it.each([
      ['text/markdown', '"*a_" x 4,000 (12 KB)', '*a_'.repeat(4000)],
      ['text/markdown', '"<!--" x 24,900', `a ${'<!--'.repeat(24_900)}`],
      ['text/html', '<div> x 5,000', `${'<div>'.repeat(5000)}deep text`],
      ['text/plain', 'one 1 MB word ending in a digit', `${'a'.repeat(1_000_000)}1\nNext line`],
    ])('reads or refuses %s %s without holding the loop', async (type, label, content) => {
      const control = await addDocument(proseOfLength(content.length), 'text/plain');
      expect(control.result.status).toBe(201);
      const hostile = await addDocument(content, type);
      if (hostile.result.status === 201) {
        expect(hostile.result.json.chunk_count).toBeGreaterThan(0);
      } else {
        expectRefusal(hostile.result, 'content', tooSlow);
      }
      expectNoLongerBlock(`document ${type} ${label}`, control, hostile);
    });

    it('reads HTML nested 5,000 deep (it used to answer 500: stack overflow)', async () => {
      const hostile = await addDocument(
        `<title>Deep</title>${'<div>'.repeat(5000)}deep text`,
        'text/html',
      );
      expect(hostile.result.status).toBe(201);
      expect(hostile.result.json).toMatchObject({ title: 'Deep', chunk_count: 1 });
      const found = await post(`/v1/knowledge-bases/${knowledgeBaseId}/search`, {
        query: 'deep text',
      });
      expect(found.json.results![0]).toMatchObject({ title: 'Deep', text: 'deep text' });
    });

    it('reads 5 MB of <div> nested a million deep like 5 MB of prose', async () => {
      const content = `${'<div>'.repeat(1_000_000)}deep text`;
      const control = await addDocument(htmlProseOfLength(content.length), 'text/html');
      expect(control.result.status).toBe(201);
      const hostile = await addDocument(content, 'text/html');
      if (hostile.result.status === 201) {
        expect(hostile.result.json.chunk_count).toBe(1);
      } else {
        expectRefusal(hostile.result, 'content', tooSlow);
      }
      expectNoLongerBlock('document text/html <div> x 1,000,000', control, hostile);
    });

    if (textOnly) {
      describe('a refusal that a count decides', () => {
        /**
         * A second instance over the same database whose text deadline (ten minutes) no input here
         * can reach: a deadline must not pre-empt the count on a slow machine.
         */
        let patient: TestApp;
        let patientUrl: string;
        beforeAll(async () => {
          patient = await startTestApp({
            dialect,
            database: service.database,
            adminKey: service.adminKey,
            overrides: { text: { timeout_ms: 600_000, timeout_ms_per_mib: 0 } },
          });
          await patient.app.listen({ host: '127.0.0.1', port: 0 });
          patientUrl = `http://127.0.0.1:${(patient.app.server.address() as AddressInfo).port}`;
          const warm = await post('/v1/layout', { message: '# Warm\n\nup' }, patientUrl);
          expect(warm.status).toBe(200);
        });
        afterAll(async () => {
          await patient?.close();
        });

        it('refuses 800,000 one-line sections (4.8 MB) as too many chunks, early', async () => {
          const content = '# h\nx\n'.repeat(800_000);
          // Refused before any chunk is stored: measured against the budget alone (a control of
          // 4.8 MB of prose would cost the suite seconds and say nothing more). The refusal is
          // decided by counting sections, so it is asked of the instance no deadline can pre-empt:
          // on a loaded machine the 4.8 MB would otherwise outlast the other's 15 s and be refused
          // as too slow.
          const control = await addDocument(proseOfLength(1000), 'text/markdown', patientUrl);
          expect(control.result.status).toBe(201);
          const hostile = await addDocument(content, 'text/markdown', patientUrl);
          expectRefusal(hostile.result, 'content', /more than 20000 chunks/);
          expectNoLongerBlock('document text/markdown "# h\\nx\\n" x 800,000', control, hostile);
        });
      });
    }
  });

  describe('web pages read by the WebAgent', () => {
    it.each([250, 1000, 2000, 5000])(
      'reads a page of <div> nested %i deep without holding the loop',
      async (depth) => {
        const page = `<html><head><title>Deep ${depth}</title></head><body>${'<div>'.repeat(depth)}<p>The deep text at the bottom.</p></body></html>`;
        served.set(`/deep-${depth}`, page);
        served.set(`/control-${depth}`, htmlProseOfLength(page.length));
        const control = await readPages(`/control-${depth}`);
        expect(control.result.json.success).toBe(true);
        const hostile = await readPages(`/deep-${depth}`);
        expect(hostile.result.status).toBe(200);
        expect(hostile.result.json.result!.pages[0]).toMatchObject({
          title: `Deep ${depth}`,
          text: 'The deep text at the bottom.',
        });
        expectNoLongerBlock(`web page <div> x ${depth}`, control, hostile);
      },
    );
  });
});

// The queue and the deadline are the text threads' own: asked on one dialect (see the header).
describe.each(allDialects.slice(0, 1))('the text workers under load on $name', (dialect) => {
  let service: TestApp;

  beforeAll(async () => {
    // Half a second: what the test waits for twice; its ordinary layouts take a few milliseconds.
    service = await startTestApp({
      dialect,
      overrides: {
        text: { worker_threads: 1, max_queue: 1, timeout_ms: 500, timeout_ms_per_mib: 0 },
      },
    });
  });
  afterAll(async () => {
    await service?.close();
  });

  it('answers 503 with Retry-After once the queue is full, and 400 at the deadline', async () => {
    const layout = (message: string) =>
      service.app.inject({
        method: 'POST',
        url: '/v1/layout',
        headers: bearer(service.adminKey),
        payload: { message },
      });
    expect((await layout('# Warm up')).statusCode).toBe(200);
    // One runs until its deadline, one waits in the queue, the rest find it full.
    const answers = await Promise.all(
      Array.from({ length: 4 }, () => layout('*a_'.repeat(33_000))),
    );
    const statuses = answers.map((answer) => answer.statusCode).sort();
    expect(statuses).toEqual([400, 400, 503, 503]);
    const busy = answers.find((answer) => answer.statusCode === 503)!;
    expect(busy.headers['retry-after']).toBe('1');
    expect(busy.json()).toMatchObject({
      error: { type: 'api_error', code: 'service_unavailable', param: null },
    });
    const late = answers.find((answer) => answer.statusCode === 400)!;
    expect(late.json<Body>().error).toMatchObject({
      code: 'invalid_parameter',
      param: 'message',
      message: expect.stringMatching(/took longer than 500 ms/) as unknown,
    });
    // The threads recover: an ordinary layout works again.
    expect((await layout('## Next\n\nText.')).statusCode).toBe(200);
  });
});
