// The logger never writes a credential: a request's key headers, a line's own `key` or
// `admin_key`, and a `key` one level down in a line's fields.
import { describe, expect, it } from 'vitest';
import { createLogger, redactedText, withoutNestedKeys } from './logger.js';

/** A logger writing into an array, and its lines parsed. */
function capturedLogger() {
  const lines: string[] = [];
  const logger = createLogger('test-service', 'info', {
    write: (line: string) => lines.push(line),
  });
  return { logger, lines: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>) };
}

describe('createLogger', () => {
  it('redacts the key headers of a logged request', () => {
    const { logger, lines } = capturedLogger();
    logger.info(
      { req: { method: 'GET', headers: { authorization: 'Bearer sk-a', 'x-api-key': 'sk-b' } } },
      'incoming',
    );
    const [line] = lines();
    expect(line?.req).toEqual({
      method: 'GET',
      headers: { authorization: redactedText, 'x-api-key': redactedText },
    });
  });

  it('redacts a line’s own key fields', () => {
    const { logger, lines } = capturedLogger();
    logger.info({ key: 'sk-c', admin_key: 'sk-d', key_id: 'key_1' }, 'made');
    expect(lines()[0]).toMatchObject({
      key: redactedText,
      admin_key: redactedText,
      key_id: 'key_1',
    });
  });

  it('redacts a key one level down, in a line and in a child logger’s, leaving the object alone', () => {
    const { logger, lines } = capturedLogger();
    const created = { id: 'key_2', key: 'sk-e' };
    logger.info({ created, count: 2 }, 'created');
    logger.child({ reqId: 'req-1' }).warn({ made: { key: 'sk-f', name: 'n' } }, 'child');
    const [first, second] = lines();
    expect(first).toMatchObject({ created: { id: 'key_2', key: redactedText }, count: 2 });
    expect(second).toMatchObject({ reqId: 'req-1', made: { key: redactedText, name: 'n' } });
    expect(created.key).toBe('sk-e');
    expect(JSON.stringify(lines())).not.toMatch(/sk-[a-f]/);
  });

  it('redacts a key an error carries, keeping its type, message and stack', () => {
    const { logger, lines } = capturedLogger();
    const error = Object.assign(new TypeError('boom'), { key: 'sk-g', code: 'E_X' });
    logger.error({ err: error }, 'failed');
    const logged = lines()[0]?.err as { stack?: string; key?: string } | undefined;
    expect(logged).toMatchObject({ type: 'TypeError', message: 'boom', code: 'E_X' });
    expect(logged?.stack).toContain('boom');
    expect(logged?.key).toBe(redactedText);
    expect(error.key).toBe('sk-g');
  });

  it('writes a line with no credential as it was given', () => {
    const { logger, lines } = capturedLogger();
    logger.info(
      { method: 'POST', path: '/v1/chat/completions', status: 200, duration_ms: 1.25 },
      'request completed',
    );
    expect(lines()[0]).toMatchObject({
      service: 'test-service',
      method: 'POST',
      path: '/v1/chat/completions',
      status: 200,
      duration_ms: 1.25,
      msg: 'request completed',
    });
  });
});

describe('withoutNestedKeys', () => {
  it('answers the same object when nothing is to be redacted', () => {
    const logged = { method: 'GET', nested: { id: 1 }, list: [1, 2], none: null };
    expect(withoutNestedKeys(logged)).toBe(logged);
  });
});
