// safeFetch against real local servers: SSRF refusals (no connection reaches the target), the
// allow-list, redirects re-checked per hop, DNS rebinding, SNI, time and size limits, content types.
import type http from 'node:http';
import tls from 'node:tls';
import { createGzip, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  ipv6LoopbackAvailable,
  startTestServer,
  type RecordedRequest,
  type TestServer,
} from '../../../../test/support/web-servers.js';
import {
  articlePage,
  articleParagraphs,
  chromeMarkers,
} from '../../../../test/support/web-pages.js';
import type { AppConfig } from '../../../config/config.js';
import { AllowListEntryError, TargetAllowList } from '../../../net/address-policy.js';
import { extractPage } from './extract-page.js';
import { readPage } from './read-page.js';
import {
  safeFetch,
  safeFetchOptionsFromConfig,
  WebFetchError,
  type Resolver,
  type SafeFetchOptions,
} from '../../../net/safe-fetch.js';

const userAgent = 'web-agent-test/1.0';
const hugeBytes = 1024 * 1024;

function pages(request: RecordedRequest, response: http.ServerResponse): void {
  const { pathname, searchParams } = request.url;
  const send = (
    type: string | null,
    body: string | Buffer,
    headers: http.OutgoingHttpHeaders = {},
  ) => {
    response.writeHead(200, {
      ...(type === null ? {} : { 'content-type': type }),
      'content-length': Buffer.byteLength(body),
      ...headers,
    });
    response.end(body);
  };
  const chain = /^\/chain\/(\d+)$/.exec(pathname);
  if (chain !== null) {
    const left = Number(chain[1]);
    if (left === 0) return send('text/plain', 'end of the chain');
    response.writeHead(302, { location: `/chain/${left - 1}` }).end();
    return;
  }
  switch (pathname) {
    case '/article':
      return send('text/html; charset=utf-8', articlePage);
    case '/plain':
      return send('text/plain', 'A plain text page.\nSecond line.');
    case '/markdown':
      return send('text/markdown; charset=utf-8', '# Notes\n\n- one\n- two\n');
    case '/json':
      return send('application/json', '{"ok":true}');
    case '/binary':
      return send('application/octet-stream', Buffer.from([0, 1, 2, 3, 255, 254]));
    case '/image':
      return send('image/png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    case '/no-type':
      return send(null, 'what am I?');
    case '/latin1':
      return send('text/html; charset=ISO-8859-1', Buffer.from('<p>café crème</p>', 'latin1'));
    case '/meta-charset':
      return send(
        'text/html',
        Buffer.concat([
          Buffer.from('<html><head><meta charset="windows-1252"></head><body><p>'),
          Buffer.from([0x93, 0x71, 0x75, 0x6f, 0x74, 0x65, 0x64, 0x94]),
          Buffer.from('</p></body></html>'),
        ]),
      );
    case '/gzip':
      return send('text/html; charset=utf-8', gzipSync(articlePage), {
        'content-encoding': 'gzip',
      });
    case '/gzip-bomb':
      // 64 MiB of spaces compress to ~64 KiB; only the first maxBytes may be inflated.
      return send('text/plain', gzipSync(Buffer.alloc(64 * hugeBytes, 0x20)), {
        'content-encoding': 'gzip',
      });
    case '/huge':
      return send('text/plain', 'x'.repeat(hugeBytes));
    case '/huge-chunked': {
      response.writeHead(200, { 'content-type': 'text/plain' });
      for (let sent = 0; sent < hugeBytes; sent += 16_384) response.write('y'.repeat(16_384));
      response.end();
      return;
    }
    case '/endless': {
      response.writeHead(200, { 'content-type': 'text/plain' });
      const timer = setInterval(() => response.write('z'.repeat(16_384)), 2);
      response.on('close', () => clearInterval(timer));
      return;
    }
    case '/slow': {
      const timer = setTimeout(() => send('text/plain', 'finally'), 5_000);
      response.on('close', () => clearTimeout(timer));
      return;
    }
    case '/trickle': {
      response.writeHead(200, { 'content-type': 'text/plain' });
      const timer = setInterval(() => response.write('.'), 50);
      response.on('close', () => clearInterval(timer));
      return;
    }
    case '/gzip-trickle': {
      response.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' });
      const gzip = createGzip();
      gzip.pipe(response);
      const timer = setInterval(() => {
        gzip.write('.');
        gzip.flush();
      }, 50);
      response.on('close', () => {
        clearInterval(timer);
        gzip.destroy();
      });
      return;
    }
    case '/not-found':
      response.writeHead(404, { 'content-type': 'text/plain' }).end('SECRET_ERROR_BODY');
      return;
    case '/redirect':
      response
        .writeHead(Number(searchParams.get('status') ?? 302), {
          location: searchParams.get('to') ?? '/',
        })
        .end();
      return;
    case '/loop':
      response.writeHead(301, { location: '/loop' }).end();
      return;
    default:
      response.writeHead(404).end();
  }
}

let target: TestServer;
let redirector: TestServer;
let ipv6 = false;

beforeAll(async () => {
  ipv6 = await ipv6LoopbackAvailable();
  // On `::` the target also answers ::1 and 0.0.0.0, so refusals of those can be counted too.
  target = await startTestServer(pages, { host: ipv6 ? '::' : '127.0.0.1' });
  redirector = await startTestServer(pages);
});

afterAll(async () => {
  await target.close();
  await redirector.close();
});

beforeEach(() => {
  target.reset();
  redirector.reset();
});

function options(
  overrides: Partial<Omit<SafeFetchOptions, 'allowList'>> & { allow?: string[] } = {},
): SafeFetchOptions {
  const { allow = [], ...rest } = overrides;
  return {
    allowList: TargetAllowList.parse(allow),
    timeoutMs: 3_000,
    maxBytes: 256 * 1024,
    maxRedirects: 3,
    userAgent,
    ...rest,
  };
}

async function failure(promise: Promise<unknown>): Promise<WebFetchError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof WebFetchError) return error;
    throw error;
  }
  throw new Error('expected the fetch to fail');
}

/** A resolver that answers from a table and counts its calls. */
function fakeResolver(
  table: Record<string, string[] | string[][]>,
): Resolver & { calls: string[] } {
  const calls: string[] = [];
  const resolver = (hostname: string) => {
    const n = calls.filter((name) => name === hostname).length;
    calls.push(hostname);
    const entry = table[hostname];
    if (entry === undefined) {
      const error = Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), {
        code: 'ENOTFOUND',
      });
      return Promise.reject(error);
    }
    // A list of lists answers successive lookups differently (DNS rebinding).
    const answer = Array.isArray(entry[0])
      ? (entry as string[][])[Math.min(n, entry.length - 1)]
      : entry;
    return Promise.resolve(
      ((answer ?? []) as string[]).map((address) => ({
        address,
        family: address.includes(':') ? (6 as const) : (4 as const),
      })),
    );
  };
  return Object.assign(resolver, { calls });
}

describe('SSRF: refused with an empty allow-list, before any connection', () => {
  const loopbackForms = [
    ['127.0.0.1', (port: number) => `http://127.0.0.1:${port}/article`],
    ['localhost', (port: number) => `http://localhost:${port}/article`],
    ['[::1]', (port: number) => `http://[::1]:${port}/article`],
    ['0.0.0.0', (port: number) => `http://0.0.0.0:${port}/article`],
    ['decimal 2130706433', (port: number) => `http://2130706433:${port}/article`],
    ['hex 0x7f.1', (port: number) => `http://0x7f.1:${port}/article`],
    ['IPv4-mapped [::ffff:127.0.0.1]', (port: number) => `http://[::ffff:127.0.0.1]:${port}/`],
    ['NAT64 [64:ff9b::7f00:1]', (port: number) => `http://[64:ff9b::7f00:1]:${port}/`],
  ] as const;

  it.each(loopbackForms)('%s', async (_name, url) => {
    const error = await failure(safeFetch(url(target.port), options()));
    expect(error.reason).toBe('blocked_address');
    expect(error.message).toMatch(/loopback|unspecified/);
    expect(error.message).toContain('may not reach');
    // Give a stray connection time to land before counting.
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(target.connections).toBe(0);
  });

  it.each([
    'http://169.254.169.254/latest/meta-data/',
    'http://169.254.169.254/latest/meta-data/iam/security-credentials/',
    'http://[fd00:ec2::254]/latest/meta-data/',
    'http://[::ffff:169.254.169.254]/latest/meta-data/',
    'http://[::ffff:a9fe:a9fe]/',
    'http://100.100.100.200/latest/meta-data/',
  ])('the metadata address in %s', async (url) => {
    // Refused from the address alone: the reason is not a timeout or a connection failure.
    const error = await failure(safeFetch(url, options()));
    expect(error.reason).toBe('blocked_address');
    expect(error.message).toContain('metadata');
  });

  it('metadata host names, without even resolving them', async () => {
    const resolve = fakeResolver({ 'metadata.google.internal': ['169.254.169.254'] });
    for (const url of [
      'http://metadata.google.internal/computeMetadata/v1/',
      'http://METADATA.google.internal./computeMetadata/v1/',
      'http://metadata/computeMetadata/v1/',
    ]) {
      const error = await failure(safeFetch(url, options({ resolve })));
      expect(error.reason).toBe('blocked_address');
      expect(error.message).toContain('cloud metadata service');
    }
    expect(resolve.calls).toEqual([]);
  });

  it.each([
    ['10.0.0.1', 'private'],
    ['172.16.5.4', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['169.254.1.1', 'link-local'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['192.0.2.10', 'reserved'],
    ['[fe80::1]', 'link-local'],
    ['[fc00::1]', 'unique-local'],
    ['[fd12:3456::1]', 'unique-local'],
    ['[ff02::1]', 'multicast'],
    ['[::]', 'unspecified'],
  ])('the literal %s (%s)', async (host, rule) => {
    const error = await failure(safeFetch(`http://${host}:9/`, options()));
    expect(error.reason).toBe('blocked_address');
    expect(error.message).toContain(rule);
  });

  it('a host name when ANY of its addresses is private, without naming the address', async () => {
    const resolve = fakeResolver({ 'mixed.test': ['93.184.215.14', '10.20.30.40'] });
    const error = await failure(safeFetch('http://mixed.test/', options({ resolve })));
    expect(error.reason).toBe('blocked_address');
    expect(error.message).toBe(
      'Refused to fetch http://mixed.test/: mixed.test resolves to a private address, which page fetches may not reach.',
    );
    expect(error.message).not.toContain('10.20.30.40');
  });

  it('a redirect from an allow-listed origin to 127.0.0.1', async () => {
    const to = `${target.origin}/article`;
    const url = `${redirector.origin}/redirect?to=${encodeURIComponent(to)}`;
    const error = await failure(
      safeFetch(url, options({ allow: [`127.0.0.1:${redirector.port}`] })),
    );
    expect(error.reason).toBe('blocked_address');
    expect(error.url).toBe(to);
    expect(error.message).toBe(
      `Refused to follow the redirect from ${url} to ${to}: 127.0.0.1 is a loopback address, which page fetches may not reach.`,
    );
    expect(redirector.requests.map((request) => request.path)).toEqual([
      `/redirect?to=${encodeURIComponent(to)}`,
    ]);
    expect(target.connections).toBe(0);
  });

  it('a redirect from an allow-listed host name to 127.0.0.1 or 169.254.169.254', async () => {
    const resolve = fakeResolver({ 'public.test': ['127.0.0.1'] });
    const allowed = options({ allow: ['public.test'], resolve });
    const page = await safeFetch(`http://public.test:${redirector.port}/plain`, allowed);
    expect(page.text).toBe('A plain text page.\nSecond line.');

    for (const to of [`${target.origin}/article`, 'http://169.254.169.254/latest/meta-data/']) {
      const url = `http://public.test:${redirector.port}/redirect?to=${encodeURIComponent(to)}`;
      const error = await failure(safeFetch(url, allowed));
      expect(error.reason).toBe('blocked_address');
      expect(error.url).toBe(to);
    }
    expect(target.connections).toBe(0);
  });

  it('a redirect to a non-http scheme', async () => {
    const url = `${redirector.origin}/redirect?to=${encodeURIComponent('file:///etc/passwd')}`;
    const error = await failure(safeFetch(url, options({ allow: ['127.0.0.1'] })));
    expect(error.reason).toBe('invalid_url');
    expect(error.message).toBe(
      `The redirect from ${url} leads to file:///etc/passwd, which is not an http or https URL.`,
    );
  });
});

describe('the allow-list', () => {
  it('reaches the page server when its loopback address is listed', async () => {
    const page = await safeFetch(`${target.origin}/article`, options({ allow: ['127.0.0.1'] }));
    expect(page).toMatchObject({
      url: `${target.origin}/article`,
      redirects: [],
      status: 200,
      contentType: 'text/html',
      encoding: 'utf-8',
      truncated: false,
      bytes: Buffer.byteLength(articlePage),
    });
    expect(page.text).toBe(articlePage);
    expect(target.connections).toBe(1);
  });

  it('follows a redirect to the listed loopback address', async () => {
    const to = `${target.origin}/plain`;
    const url = `${redirector.origin}/redirect?status=307&to=${encodeURIComponent(to)}`;
    const page = await safeFetch(url, options({ allow: ['127.0.0.1'] }));
    expect(page.url).toBe(to);
    expect(page.redirects).toEqual([to]);
    expect(page.text).toBe('A plain text page.\nSecond line.');
    expect(target.requests.map((request) => request.path)).toEqual(['/plain']);
  });

  it('honours a port: 127.0.0.1:<port> allows that port only', async () => {
    const allow = [`127.0.0.1:${target.port}`];
    await expect(safeFetch(`${target.origin}/plain`, options({ allow }))).resolves.toMatchObject({
      status: 200,
    });
    const error = await failure(safeFetch(`${redirector.origin}/plain`, options({ allow })));
    expect(error.reason).toBe('blocked_address');
    expect(redirector.connections).toBe(0);
  });

  it('allows localhost by name, and [::1] by address', async () => {
    const byName = await safeFetch(
      `http://localhost:${target.port}/plain`,
      options({ allow: ['localhost'] }),
    );
    expect(byName.status).toBe(200);
    if (ipv6) {
      const byAddress = await safeFetch(
        `http://[::1]:${target.port}/plain`,
        options({ allow: ['::1'] }),
      );
      expect(byAddress.status).toBe(200);
      expect(target.connectionAddresses.at(-1)).toBe('::1');
    }
  });

  it('never unlocks a metadata address through a range or another host name', async () => {
    const resolve = fakeResolver({ 'creds.test': ['169.254.169.254'] });
    for (const allow of [['169.254.0.0/16'], ['0.0.0.0/0'], ['creds.test'], ['*.test']]) {
      for (const url of ['http://169.254.169.254/latest/', 'http://creds.test/latest/']) {
        const error = await failure(safeFetch(url, options({ allow, resolve, timeoutMs: 500 })));
        expect(error.reason).toBe('blocked_address');
      }
    }
  });

  it('a malformed entry is reported with its index', () => {
    expect(() => TargetAllowList.parse(['127.0.0.1', 'http://intranet/'])).toThrow(
      AllowListEntryError,
    );
    expect(() => TargetAllowList.parse(['127.0.0.1', 'http://intranet/'])).toThrow(
      "web.allowed_private_targets[1] 'http://intranet/'",
    );
  });

  it('takes its options from config.web', () => {
    const web: AppConfig['web'] = {
      searxngUrl: null,
      braveBaseUrl: 'https://api.search.brave.com',
      braveApiKeyEnv: 'BRAVE_API_KEY',
      tavilyBaseUrl: 'https://api.tavily.com',
      tavilyApiKeyEnv: 'TAVILY_API_KEY',
      allowedPrivateTargets: ['10.0.0.0/8'],
      fetchTimeoutMs: 1234,
      maxPageBytes: 5678,
      maxRedirects: 2,
      userAgent: 'ua/1',
    };
    const fromConfig = safeFetchOptionsFromConfig(web);
    expect(fromConfig).toMatchObject({
      timeoutMs: 1234,
      maxBytes: 5678,
      maxRedirects: 2,
      userAgent: 'ua/1',
    });
    expect(fromConfig.allowList.allowsAddress('10.1.2.3', 80)).toBe(true);
    expect(fromConfig.allowList.allowsAddress('192.168.1.1', 80)).toBe(false);
  });
});

describe('DNS rebinding and TLS', () => {
  it('connects to the address that was checked, resolving once per hop', async () => {
    // First answer allowed (127.0.0.1); any later lookup would answer a refused address.
    const rebound = ipv6 ? '::1' : '10.9.9.9';
    const resolve = fakeResolver({ 'rebind.test': [['127.0.0.1'], [rebound]] });
    const page = await safeFetch(
      `http://rebind.test:${target.port}/plain`,
      options({ allow: ['127.0.0.1'], resolve }),
    );
    expect(page.status).toBe(200);
    expect(resolve.calls).toEqual(['rebind.test']);
    expect(target.connectionAddresses).toHaveLength(1);
    expect(target.connectionAddresses[0]).toMatch(/^(::ffff:)?127\.0\.0\.1$/);
  });

  it('re-resolves and re-checks on every redirect hop', async () => {
    const resolve = fakeResolver({ 'hop.test': [['127.0.0.1'], ['10.9.9.9']] });
    const url = `http://hop.test:${redirector.port}/redirect?to=/plain`;
    const error = await failure(safeFetch(url, options({ allow: ['127.0.0.1'], resolve })));
    expect(error.reason).toBe('blocked_address');
    expect(resolve.calls).toEqual(['hop.test', 'hop.test']);
    expect(redirector.requests).toHaveLength(1);
  });

  it('sends the host name as TLS SNI while connecting to the checked address', async () => {
    const serverNames: string[] = [];
    const server = tls.createServer({
      SNICallback: (name, callback) => {
        serverNames.push(name);
        callback(new Error('this test server has no certificate'));
      },
    });
    server.on('tlsClientError', () => undefined);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    try {
      const port = (server.address() as { port: number }).port;
      const resolve = fakeResolver({ 'sni.test': ['127.0.0.1'] });
      const error = await failure(
        safeFetch(`https://sni.test:${port}/`, options({ allow: ['sni.test'], resolve })),
      );
      expect(error.reason).toBe('unreachable');
      expect(serverNames).toEqual(['sni.test']);
    } finally {
      server.close();
    }
  });
});

describe('limits', () => {
  const allow = ['127.0.0.1'];

  it('times out a server that never answers', async () => {
    const error = await failure(
      safeFetch(`${target.origin}/slow`, options({ allow, timeoutMs: 300 })),
    );
    expect(error.reason).toBe('timeout');
    expect(error.message).toBe(`Fetching ${target.origin}/slow took longer than 300 ms.`);
  });

  it('times out a body that trickles in (the deadline covers the whole fetch)', async () => {
    const error = await failure(
      safeFetch(`${target.origin}/trickle`, options({ allow, timeoutMs: 300 })),
    );
    expect(error.reason).toBe('timeout');
  });

  it('times out a compressed body that trickles in', async () => {
    const error = await failure(
      safeFetch(`${target.origin}/gzip-trickle`, options({ allow, timeoutMs: 300 })),
    );
    expect(error.reason).toBe('timeout');
  });

  it('cuts a huge page at maxBytes and says so', async () => {
    const page = await safeFetch(`${target.origin}/huge`, options({ allow, maxBytes: 65_536 }));
    expect(page.truncated).toBe(true);
    expect(page.bytes).toBe(65_536);
    expect(page.text).toBe('x'.repeat(65_536));
  });

  it('stops reading an endless body at maxBytes', async () => {
    const page = await safeFetch(`${target.origin}/endless`, options({ allow, maxBytes: 100_000 }));
    expect(page).toMatchObject({ truncated: true, bytes: 100_000 });
  });

  it('refuses instead when asked to, from Content-Length or while reading', async () => {
    for (const path of ['/huge', '/huge-chunked']) {
      const error = await failure(
        safeFetch(
          `${target.origin}${path}`,
          options({ allow, maxBytes: 65_536, onTooLarge: 'refuse' }),
        ),
      );
      expect(error.reason).toBe('too_large');
      expect(error.message).toBe(
        `${target.origin}${path} is larger than the 65536-byte limit for fetched pages.`,
      );
    }
  });

  it('keeps a page exactly at the limit whole', async () => {
    const page = await safeFetch(`${target.origin}/huge`, options({ allow, maxBytes: hugeBytes }));
    expect(page).toMatchObject({ truncated: false, bytes: hugeBytes });
  });

  it('counts decompressed bytes: gzip is decoded, and a gzip bomb is cut', async () => {
    const page = await safeFetch(`${target.origin}/gzip`, options({ allow }));
    expect(page.text).toBe(articlePage);
    expect(target.requests[0]?.headers['accept-encoding']).toBe('gzip, deflate, br');

    const bomb = await safeFetch(
      `${target.origin}/gzip-bomb`,
      options({ allow, maxBytes: 65_536 }),
    );
    expect(bomb).toMatchObject({ truncated: true, bytes: 65_536 });
  });

  it('follows at most maxRedirects redirects, and ends loops', async () => {
    const ok = await safeFetch(`${target.origin}/chain/3`, options({ allow, maxRedirects: 3 }));
    expect(ok.redirects).toEqual([1, 2, 3].map((n) => `${target.origin}/chain/${3 - n}`));
    expect(ok.text).toBe('end of the chain');

    const tooMany = await failure(
      safeFetch(`${target.origin}/chain/3`, options({ allow, maxRedirects: 2 })),
    );
    expect(tooMany.reason).toBe('too_many_redirects');
    expect(tooMany.message).toBe(`${target.origin}/chain/3 redirected more than 2 times.`);

    const loop = await failure(safeFetch(`${target.origin}/loop`, options({ allow })));
    expect(loop.reason).toBe('too_many_redirects');
    expect(target.requests.filter((request) => request.path === '/loop')).toHaveLength(4);
  });
});

describe('content', () => {
  const allow = ['127.0.0.1'];

  it.each([
    ['/binary', "content type 'application/octet-stream'"],
    ['/image', "content type 'image/png'"],
    ['/no-type', 'no content type'],
  ])('refuses %s', async (path, what) => {
    const error = await failure(safeFetch(`${target.origin}${path}`, options({ allow })));
    expect(error.reason).toBe('unsupported_content_type');
    expect(error.message).toBe(
      `${target.origin}${path} answered with ${what}; only text/html, application/xhtml+xml, text/plain, text/markdown, application/json pages are read.`,
    );
  });

  it.each([
    ['/plain', 'text/plain', 'A plain text page.\nSecond line.'],
    ['/markdown', 'text/markdown', '# Notes\n\n- one\n- two\n'],
    ['/json', 'application/json', '{"ok":true}'],
  ])('reads %s as %s', async (path, contentType, text) => {
    const page = await safeFetch(`${target.origin}${path}`, options({ allow }));
    expect(page).toMatchObject({ contentType, text });
  });

  it('decodes the charset from the header, else from a meta tag', async () => {
    const latin1 = await safeFetch(`${target.origin}/latin1`, options({ allow }));
    expect(latin1).toMatchObject({ encoding: 'windows-1252', text: '<p>café crème</p>' });
    const meta = await safeFetch(`${target.origin}/meta-charset`, options({ allow }));
    expect(meta.encoding).toBe('windows-1252');
    expect(meta.text).toContain('<p>\u201cquoted\u201d</p>');
  });

  it('reports HTTP errors by status, without the body', async () => {
    const error = await failure(safeFetch(`${target.origin}/not-found`, options({ allow })));
    expect(error).toMatchObject({ reason: 'http_error', status: 404 });
    expect(error.message).toBe(`${target.origin}/not-found answered HTTP 404.`);
  });

  it('sends the configured User-Agent and an Accept for text', async () => {
    await safeFetch(`${target.origin}/plain`, options({ allow }));
    expect(target.requests[0]?.headers['user-agent']).toBe(userAgent);
    expect(target.requests[0]?.headers.accept).toContain('text/html');
  });

  it.each([
    ['not a url', "'not a url' is not a valid URL."],
    ['ftp://127.0.0.1/file', 'ftp://127.0.0.1/file is not an http or https URL.'],
    ['file:///etc/passwd', 'file:///etc/passwd is not an http or https URL.'],
    [
      'http://user:secret@127.0.0.1:9/',
      'http://127.0.0.1:9/ contains credentials (pages are fetched without them).',
    ],
  ])('refuses %s as an invalid URL', async (url, message) => {
    const error = await failure(safeFetch(url, options({ allow })));
    expect(error.reason).toBe('invalid_url');
    expect(error.message).toBe(message);
    expect(error.url).not.toContain('secret');
  });

  it('reports closed ports and unknown hosts as unreachable', async () => {
    const closed = await startTestServer(pages);
    await closed.close();
    const refused = await failure(safeFetch(`${closed.origin}/`, options({ allow })));
    expect(refused.reason).toBe('unreachable');
    expect(refused.message).toBe(`Could not fetch ${closed.origin}/: the connection was refused.`);

    const resolve = fakeResolver({});
    const unknown = await failure(safeFetch('http://nowhere.test/', options({ resolve })));
    expect(unknown.reason).toBe('unreachable');
    expect(unknown.message).toBe(
      'Could not fetch http://nowhere.test/: its host name does not resolve.',
    );
  });

  it("stops when the caller's signal aborts", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const error = await failure(
      safeFetch(`${target.origin}/slow`, options({ allow, signal: controller.signal })),
    );
    expect(error.reason).toBe('aborted');
  });
});

describe('readPage', () => {
  it('returns the article text of a fetched page, without the chrome', async () => {
    const page = await readPage(`${target.origin}/article`, {
      ...options({ allow: ['127.0.0.1'] }),
      extract: (body, url, extractOptions) =>
        Promise.resolve(extractPage(body, url, extractOptions)),
    });
    expect(page.url).toBe(`${target.origin}/article`);
    expect(page.title).toBe('How Tides Work');
    expect(page.text).toBe(articleParagraphs.join('\n\n'));
    for (const marker of chromeMarkers) expect(page.text).not.toContain(marker);
    expect(page.truncated).toBe(false);
  });

  it('still refuses what safeFetch refuses', async () => {
    const error = await failure(
      readPage(`${target.origin}/article`, {
        ...options(),
        extract: () => Promise.reject(new Error('never reached')),
      }),
    );
    expect(error.reason).toBe('blocked_address');
    expect(target.connections).toBe(0);
  });
});
