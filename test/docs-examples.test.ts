// Every curl example of README.md, run in order against the service as `npm start` runs it (a
// child process on a real port, a fake model provider as its configured catalog), on both
// dialects: each answers the status its comment promises (else a 2xx) and the fields it shows.
// Placeholders (`$KEY`, `conv_…`, `kb_…`, `sk-…` …) are filled from earlier answers, so a curl
// block added to the README later is checked the same way without touching this file.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey } from '../src/auth/api-key-format.js';
import { fakeModelCatalog, offlineSpeechModels, upstreamSecret } from './support/chat-harness.js';
import { allDialects, type TestDatabase } from './support/dialects.js';
import { startFakeUpstream, type FakeUpstream } from './support/fake-upstream.js';
import { repositoryRoot, startService, type RunningService } from './support/process.js';
import {
  ReceivedValues,
  curlRequest,
  documentedFields,
  expandWord,
  fieldsOf,
  readShell,
  readmeCommands,
  type ReadmeCommand,
} from './support/readme-examples.js';

const readme = readFileSync(path.join(repositoryRoot, 'README.md'), 'utf8');
const shown = (part: ReadmeCommand['words'][number][number]) =>
  'literal' in part
    ? part.literal
    : 'variable' in part
      ? `$${part.variable}`
      : `$(${part.substitution})`;
const commands = readmeCommands(readme);
const firstWord = (command: ReadmeCommand) => command.words[0]?.map((part) => shown(part)).join('');
const examples = commands.filter((command) => ['curl', 'export'].includes(firstWord(command)!));

/** `line 57: curl -X POST $BASE/v1/api-keys` — enough to find the example. */
function title(command: ReadmeCommand): string {
  const words = command.words
    .slice(0, 6)
    .map((word) => word.map((part) => shown(part)).join(''))
    .filter((word) => !word.startsWith('{') && !/^[A-Za-z-]+: /.test(word));
  return `line ${command.line}: ${words.join(' ')}`;
}

describe('reading the README as the shell would', () => {
  it('joins continuations, keeps quoted newlines, expands only outside single quotes', () => {
    const [first, second] = readShell(
      `curl -X POST "$BASE/x" \\\n  -d '{"a":\n 1, "b":"$KEY"}' # 201 {"id":"x"}\necho done`,
    );
    expect(first!.words.map((word) => expandWord(word, new Map([['BASE', 'http://h']])))).toEqual([
      'curl',
      '-X',
      'POST',
      'http://h/x',
      '-d',
      '{"a":\n 1, "b":"$KEY"}',
    ]);
    expect(first!.comment).toBe('201 {"id":"x"}');
    expect(second!.line).toBe(4);
  });

  it('takes the promised status from the comment on or right after the command', () => {
    const [a, b, c] = readmeCommands(
      '```sh\ncurl $BASE/a\n# 401 {"error":{}}\n\n# A description.\ncurl $BASE/b   # → {"id":"kb_…"}\ncurl $BASE/c\n```\n',
    );
    expect([a!.expectedStatus, b!.expectedStatus, c!.expectedStatus]).toEqual([401, null, null]);
    expect([a!.documented, b!.documented, c!.documented]).toEqual([
      '{"error":{}}',
      '{"id":"kb_…"}',
      null,
    ]);
  });

  it('builds the request curl would send', () => {
    expect(curlRequest(['-d', 'a=1', 'http://h/x'])).toMatchObject({
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'a=1',
    });
    expect(
      curlRequest(['-N', '-X', 'DELETE', '-H', 'Authorization: Bearer k', 'http://h/y']),
    ).toMatchObject({ method: 'DELETE', headers: { authorization: 'Bearer k' }, body: undefined });
    expect(() => curlRequest(['-F', 'file=@a.wav', 'http://h/z'])).toThrow(/-F/);
  });

  it('fills placeholders with what earlier answers created', () => {
    const values = new ReceivedValues();
    values.record({ data: [{ id: 'conv_aaaaaaaaaaaa' }] }, false);
    values.record({ id: 'conv_bbbbbbbbbbbb', key: `sk-${'x'.repeat(48)}` }, true);
    values.record({ id: 'conv_cccccccccccc' }, false);
    expect(values.fill('/v1/conversations/conv_…/template')).toBe(
      '/v1/conversations/conv_bbbbbbbbbbbb/template',
    );
    expect(values.fill('Bearer sk-…')).toBe(`Bearer sk-${'x'.repeat(48)}`);
    expect(() => values.fill('/v1/agents/agent_…')).toThrow(/agent_…/);
  });
});

describe.each(allDialects)('the README curl examples on $name', (dialect) => {
  let upstream: FakeUpstream;
  let database: TestDatabase;
  let service: RunningService;
  const directory = mkdtempSync(path.join(tmpdir(), 'readme-examples-'));
  const variables = new Map<string, string>();
  /** curl's cookie jars (`-c FILE` / `-b FILE`), kept in memory by file name. */
  const cookieJars = new Map<string, Map<string, string>>();
  const received = new ReceivedValues();
  /** Set by the runner; the README's own `export` of them only says where they come from. */
  const given = new Set(['BASE', 'KEY']);

  beforeAll(async () => {
    upstream = await startFakeUpstream({ requireApiKey: upstreamSecret });
    database = await dialect.create();
    const configFile = path.join(directory, 'platform.config.json');
    const catalog = fakeModelCatalog(upstream.baseUrl);
    writeFileSync(
      configFile,
      JSON.stringify({
        ...catalog,
        // The README's examples also speak and listen (this machine's offline engines) and name
        // the local provider of the built-in catalog (its file is absent here).
        models: [
          ...catalog.models,
          ...offlineSpeechModels,
          {
            name: 'local-qwen',
            provider: 'local',
            source: 'hf:Qwen/Qwen2.5-0.5B-Instruct-GGUF/qwen2.5-0.5b-instruct-q4_k_m.gguf',
            max_tokens: 1024,
            context_length: 4096,
          },
        ],
      }),
    );
    const adminKey = generateApiKey();
    service = await startService({
      DATABASE_URL: database.url,
      PLATFORM_CONFIG: configFile,
      PLATFORM_ADMIN_KEY: adminKey,
      FAKE_UPSTREAM_KEY: upstreamSecret,
      MODELS_DIR: path.join(directory, 'models'),
      MODEL_AUTO_PULL: 'false',
    });
    variables.set('BASE', `http://127.0.0.1:${service.port}`);
    variables.set('KEY', adminKey);
  });
  afterAll(async () => {
    await service?.stop();
    await database?.drop();
    await upstream?.close();
    rmSync(directory, { recursive: true, force: true });
  });

  it('finds the walkthrough and every other curl example', () => {
    expect(examples.filter((command) => firstWord(command) === 'curl').length).toBeGreaterThan(20);
  });

  it.each(examples.map((command) => [title(command), command] as const))(
    '%s',
    async (_title, command) => {
      const words = command.words.map((word) => expandWord(word, variables));
      if (words[0] === 'export') {
        for (const assignment of words.slice(1)) {
          const [name, ...rest] = assignment.split('=');
          const value = rest.join('=');
          if (given.has(name!)) continue;
          if (value === '…') {
            // `export CSRF=…  # the csrf_token of the login answer`: the field the comment names.
            const field = received.fieldNamedIn(command.comment ?? '');
            expect(field, `export ${name}=… names no field an earlier answer had`).toBeDefined();
            variables.set(name!, field!);
            continue;
          }
          variables.set(name!, ReceivedValues.isPlaceholder(value) ? received.fill(value) : value);
        }
        return;
      }
      expect(command.operators, 'a README curl example runs alone: no pipes or chains').toEqual([]);
      const request = curlRequest(words.slice(1).map((word) => received.fill(word)));
      expect(request.url.startsWith(variables.get('BASE')!), request.url).toBe(true);
      if (request.cookies !== undefined) {
        request.headers.cookie = request.cookies.includes('=')
          ? request.cookies
          : [...(cookieJars.get(request.cookies) ?? new Map<string, string>())]
              .map(([name, value]) => `${name}=${value}`)
              .join('; ');
      }
      const response = await fetch(request.url, {
        method: request.method,
        headers: request.headers,
        ...(request.body === undefined ? {} : { body: request.body }),
        signal: AbortSignal.timeout(20_000),
      });
      if (request.cookieJarOut !== undefined) {
        const jar = cookieJars.get(request.cookieJarOut) ?? new Map<string, string>();
        for (const cookie of response.headers.getSetCookie()) {
          const [pair = '', ...attributes] = cookie.split(';');
          const [cookieName = '', ...value] = pair.split('=');
          const expired = attributes.some((attribute) => /^\s*max-age=0\s*$/i.test(attribute));
          if (expired) jar.delete(cookieName.trim());
          else jar.set(cookieName.trim(), value.join('='));
        }
        cookieJars.set(request.cookieJarOut, jar);
      }
      const text = await response.text();
      const type = response.headers.get('content-type') ?? '';
      const answer: unknown = type.startsWith('application/json')
        ? JSON.parse(text)
        : type.startsWith('text/event-stream')
          ? text
              .split('\n')
              .filter((line) => line.startsWith('data: {'))
              .map((line) => JSON.parse(line.slice('data: '.length)) as unknown)
          : text;
      const what = `${request.method} ${request.url} → ${response.status} ${text.slice(0, 500)}`;
      if (command.expectedStatus === null) {
        expect(response.status, what).toBeGreaterThanOrEqual(200);
        expect(response.status, what).toBeLessThan(300);
      } else {
        expect(response.status, what).toBe(command.expectedStatus);
      }
      if (response.ok) received.record(answer, request.method === 'POST');
      if (command.documented !== null && type.startsWith('application/json')) {
        const shown = documentedFields(command.documented);
        const actual = fieldsOf(answer);
        expect(
          shown.keys.filter((key) => !actual.keys.has(key)),
          `fields the README shows but ${what} lacks`,
        ).toEqual([]);
        expect(
          shown.values.filter(([key, value]) => !actual.pairs.has(`${key}=${value}`)),
          `values the README shows but ${what} differs on`,
        ).toEqual([]);
      }
    },
  );
});
