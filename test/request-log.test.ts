// The request log line (src/http/request-log.ts): every request at REQUEST_LOG_SAMPLE 1, only
// failed ones (with their request id) at 0.
import { Writable } from 'node:stream';
import Fastify, { LogController, type FastifyBaseLogger } from 'fastify';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { installRequestLog } from '../src/http/request-log.js';

async function linesFor(sample: number): Promise<Array<Record<string, unknown>>> {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (line !== '') lines.push(JSON.parse(line) as Record<string, unknown>);
      }
      callback();
    },
  });
  const logger: FastifyBaseLogger = pino({ level: 'info' }, sink);
  const app = Fastify({
    loggerInstance: logger,
    logController: new LogController({
      disableRequestLogging: true,
      requestIdLogLabel: 'request_id',
    }),
  });
  installRequestLog(app, sample);
  app.get('/fine', () => ({ ok: true }));
  app.get('/broken', (_request, reply) => reply.code(502).send({ ok: false }));
  for (let index = 0; index < 20; index += 1) await app.inject({ url: '/fine?x=1' });
  await app.inject({ url: '/broken' });
  await app.close();
  return lines.filter((line) => line.msg === 'request completed');
}

describe('the request log', () => {
  it('logs every request at sample 1, with method, path without query, status and duration', async () => {
    const lines = await linesFor(1);
    expect(lines).toHaveLength(21);
    expect(lines[0]).toMatchObject({ method: 'GET', path: '/fine', status: 200 });
    expect(typeof lines[0]!.duration_ms).toBe('number');
    expect(typeof lines[0]!.request_id).toBe('string');
  });

  it('logs only failed requests at sample 0, still with their request id', async () => {
    const lines = await linesFor(0);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ path: '/broken', status: 502 });
    expect(typeof lines[0]!.request_id).toBe('string');
  });
});
