// The documentation says what the service does, and this holds it to it. Every curl example of
// README.md and of each docs/*.md page is run against the service as `npm start` runs it (a child
// process on a real port), configured with the README's own model entry pointed at a fake
// OpenAI-compatible upstream, plus the fake catalog of the other suites, on both dialects: each
// answers the status its comment promises (else a 2xx) and the fields it shows. Each page starts
// afresh with only `$BASE` and `$KEY`; placeholders (`conv_…`, `kb_…`, `sk-…` …) are filled from
// that page's earlier answers, so a curl block added later is checked without touching this file.
// Every relative link lands on a file that exists and every `#anchor` on one of its headings; the
// README stays short and links every page; each page opens with its table of contents.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { generateApiKey } from '../src/modules/accounts/api-key-format.js';
import { fakeModelCatalog, offlineSpeechModels, upstreamSecret } from './support/chat-harness.js';
import { allDialects, type TestDatabase } from './support/dialects.js';
import { startFakeUpstream, type FakeUpstream } from './support/fake-upstream.js';
import { repositoryRoot, startService, type RunningService } from './support/process.js';
import {
  ReceivedValues,
  brokenLinks,
  curlRequest,
  documentedFields,
  expandWord,
  fieldsOf,
  githubSlug,
  markdownHeadings,
  markdownLinks,
  readShell,
  shellCommands,
  type ShellCommand,
} from './support/docs-examples.js';

/** README.md, then every page of docs/, by name. */
const pages = [
  'README.md',
  ...readdirSync(path.join(repositoryRoot, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`),
];
/** Each page read once, and its examples parsed once, for every test and both dialects. */
const texts = new Map<string, string>();
const read = (page: string) => {
  let text = texts.get(page);
  if (text === undefined) {
    text = readFileSync(path.join(repositoryRoot, page), 'utf8');
    texts.set(page, text);
  }
  return text;
};
const readme = read('README.md');

const shown = (part: ShellCommand['words'][number][number]) =>
  'literal' in part
    ? part.literal
    : 'variable' in part
      ? `$${part.variable}`
      : `$(${part.substitution})`;
const firstWord = (command: ShellCommand) => command.words[0]?.map((part) => shown(part)).join('');
const examples = new Map<string, readonly ShellCommand[]>();
const examplesOf = (page: string) => {
  let found = examples.get(page);
  if (found === undefined) {
    found = shellCommands(read(page)).filter((command) =>
      ['curl', 'export'].includes(firstWord(command)!),
    );
    examples.set(page, found);
  }
  return found;
};

/** `docs/api.md:57 curl -X POST $BASE/v1/api-keys` — enough to find the example. */
function title(page: string, command: ShellCommand): string {
  const words = command.words
    .slice(0, 6)
    .map((word) => word.map((part) => shown(part)).join(''))
    .filter((word) => !word.startsWith('{') && !/^[A-Za-z-]+: /.test(word));
  return `${page}:${command.line} ${words.join(' ')}`;
}

/** The README's "Point it at your model" configuration: its first YAML block. */
function readmeConfiguration(): { models: Array<Record<string, unknown>> } {
  const section = readme.slice(readme.indexOf('## Point it at your model'));
  const block = /^```yaml\n([\s\S]*?)^```/m.exec(section);
  if (block === null) throw new Error('README: no yaml block under "Point it at your model"');
  return parseYaml(block[1]!) as { models: Array<Record<string, unknown>> };
}

describe('reading the docs as the shell would', () => {
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
    const [a, b, c] = shellCommands(
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
    expect(
      curlRequest([
        '-F',
        'file=@a.wav;type=audio/wav',
        '-F',
        'model=m',
        '-o',
        'out.txt',
        'http://h/z',
      ]),
    ).toMatchObject({
      method: 'POST',
      body: undefined,
      form: [
        { name: 'file', file: 'a.wav', type: 'audio/wav', filename: undefined },
        { name: 'model', value: 'm' },
      ],
      output: 'out.txt',
    });
    expect(() => curlRequest(['-F', 'a=<notes.txt', 'http://h/z'])).toThrow(/-F a=</);
    expect(() => curlRequest(['-F', 'a=1', '-d', 'b=2', 'http://h/z'])).toThrow(/-F and -d/);
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

  it('slugs headings as GitHub does, and finds links outside code only', () => {
    expect(githubSlug('The voice stream: /v1/voice/stream/{session_id}')).toBe(
      'the-voice-stream-v1voicestreamsession_id',
    );
    expect(githubSlug('Timeouts, retries and failures')).toBe('timeouts-retries-and-failures');
    expect(githubSlug('Intents, entities & complexity')).toBe('intents-entities--complexity');
    expect(
      markdownHeadings('# A\n\n## Usage\n\n### `x` and [y](z.md)\n\n## Usage\n').map(
        (heading) => heading.slug,
      ),
    ).toEqual(['a', 'usage', 'x-and-y', 'usage-1']);
    expect(
      markdownLinks('[a](b.md#c)\n\n```md\n[not](a-link.md)\n```\n\n| x | [d](#e) |\n|---|---|\n'),
    ).toEqual([
      { href: 'b.md#c', line: 1 },
      { href: '#e', line: 7 },
    ]);
  });

  it('finds the links that land nowhere: a missing file, a missing heading, outside the tree', () => {
    const root = mkdtempSync(path.join(tmpdir(), 'docs-links-'));
    try {
      mkdirSync(path.join(root, 'docs'));
      writeFileSync(path.join(root, 'README.md'), '# R\n\n## Start here\n');
      writeFileSync(
        path.join(root, 'docs', 'a.md'),
        [
          '# A',
          '[ok](../README.md#start-here) [ok](#a) [ok](https://example.com/x.md)',
          '[gone](b.md) [no heading](../README.md#finish) [here](#nowhere) [out](../../x.md)',
        ].join('\n\n'),
      );
      expect(brokenLinks(root, 'docs/a.md')).toEqual([
        'docs/a.md:5 b.md: no file docs/b.md',
        'docs/a.md:5 ../README.md#finish: README.md has no heading #finish',
        'docs/a.md:5 #nowhere: docs/a.md has no heading #nowhere',
        'docs/a.md:5 ../../x.md: no file ../x.md',
      ]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('the pages and their links', () => {
  it('keeps the README short, with "Point it at your model" on its first screen', () => {
    const lines = readme.split('\n');
    expect(lines.length).toBeLessThanOrEqual(300);
    const pointAt = lines.findIndex((line) => line === '## Point it at your model');
    expect(pointAt, 'the heading "Point it at your model"').toBeGreaterThan(0);
    expect(pointAt, 'within the first screen').toBeLessThan(40);
    expect(readme).toContain('npm ci && npm start');
    expect(readme).toContain('npm ci && npm test');
  });

  it("configures an OpenAI-compatible server in the README's six lines", () => {
    const block = /## Point it at your model[\s\S]*?```yaml\n([\s\S]*?)```/.exec(readme)![1]!;
    expect(block.trimEnd().split('\n')).toHaveLength(6);
    const [model] = readmeConfiguration().models;
    expect(model).toMatchObject({ provider: 'openai-compatible', base_url: expect.any(String) });
  });

  it('links every page of docs/ from the README', () => {
    const linked = new Set(markdownLinks(readme).map((link) => link.href.split('#')[0]));
    expect(pages.filter((page) => page !== 'README.md' && !linked.has(page))).toEqual([]);
  });

  it.each(pages.filter((page) => page.startsWith('docs/') && page !== 'docs/decisions.md'))(
    '%s opens with a table of contents that lists each of its sections',
    (page) => {
      const text = read(page);
      const headings = markdownHeadings(text);
      expect(headings[0]?.depth, 'a title first').toBe(1);
      const sections = headings.filter((heading) => heading.depth === 2);
      expect(sections[0]?.text, 'the first section').toBe('Contents');
      const contents = text.slice(
        text.indexOf('## Contents'),
        text.indexOf('\n## ', text.indexOf('## Contents') + 1),
      );
      const listed = new Set(markdownLinks(contents).map((link) => link.href));
      expect(
        sections.slice(1).filter((section) => !listed.has(`#${section.slug}`)),
        'sections missing from the contents',
      ).toEqual([]);
    },
  );

  it.each(pages)(
    '%s: every relative link lands on a file, and every anchor on a heading',
    (page) => {
      expect(brokenLinks(repositoryRoot, page)).toEqual([]);
    },
  );
});

describe.each(allDialects)('the curl examples of the docs on $name', (dialect) => {
  let upstream: FakeUpstream;
  let database: TestDatabase;
  let service: RunningService;
  const directory = mkdtempSync(path.join(tmpdir(), 'docs-examples-'));
  let base = '';
  let adminKey = '';

  beforeAll(async () => {
    upstream = await startFakeUpstream({ requireApiKey: upstreamSecret, callNamedTools: true });
    database = await dialect.create();
    const configFile = path.join(directory, 'platform.config.json');
    const catalog = fakeModelCatalog(upstream.baseUrl);
    // The README's model first, as the README configures it, but served by the fake upstream: it
    // is the default model (the first chat model listed) for every page's examples.
    const readmeModels: Array<Record<string, unknown>> = readmeConfiguration().models.map(
      (model) => ({ ...model, base_url: upstream.baseUrl }),
    );
    const keyVariables = readmeModels.flatMap((model) =>
      typeof model.api_key_env === 'string' ? [model.api_key_env] : [],
    );
    writeFileSync(
      configFile,
      JSON.stringify({
        models: [
          ...readmeModels,
          ...catalog.models,
          // The examples also speak and listen (this machine's offline engines) and name the
          // local provider of the built-in catalog (its file is absent here).
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
    adminKey = generateApiKey();
    service = await startService({
      DATABASE_URL: database.url,
      PLATFORM_CONFIG: configFile,
      PLATFORM_ADMIN_KEY: adminKey,
      FAKE_UPSTREAM_KEY: upstreamSecret,
      ...Object.fromEntries(keyVariables.map((name): [string, string] => [name, upstreamSecret])),
      MODELS_DIR: path.join(directory, 'models'),
      MODEL_AUTO_PULL: 'false',
    });
    base = `http://127.0.0.1:${service.port}`;
  });
  afterAll(async () => {
    await service?.stop();
    await database?.drop();
    await upstream?.close();
    rmSync(directory, { recursive: true, force: true });
  });

  it('finds the tour and every other curl example', () => {
    const curls = (page: string) =>
      examplesOf(page).filter((command) => firstWord(command) === 'curl');
    expect(curls('README.md').length).toBeGreaterThanOrEqual(5);
    expect(pages.flatMap(curls).length).toBeGreaterThan(50);
  });

  describe.each(pages.filter((page) => examplesOf(page).length > 0))('%s', (page) => {
    const variables = new Map<string, string>();
    /** curl's cookie jars (`-c FILE` / `-b FILE`), kept in memory by file name. */
    const cookieJars = new Map<string, Map<string, string>>();
    /** What `-o FILE` saved, kept in memory by file name, for a later `-F name=@FILE`. */
    const savedFiles = new Map<string, Buffer>();
    const received = new ReceivedValues();
    /** Set by the runner; a page's own `export` of them only says where they come from. */
    const given = new Set(['BASE', 'KEY']);

    beforeAll(() => {
      variables.set('BASE', base);
      variables.set('KEY', adminKey);
    });

    it.each(examplesOf(page).map((command) => [title(page, command), command] as const))(
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
            variables.set(
              name!,
              ReceivedValues.isPlaceholder(value) ? received.fill(value) : value,
            );
          }
          return;
        }
        expect(command.operators, 'a curl example runs alone: no pipes or chains').toEqual([]);
        const request = curlRequest(words.slice(1).map((word) => received.fill(word)));
        expect(request.url.startsWith(base), request.url).toBe(true);
        if (request.cookies !== undefined) {
          request.headers.cookie = request.cookies.includes('=')
            ? request.cookies
            : [...(cookieJars.get(request.cookies) ?? new Map<string, string>())]
                .map(([name, value]) => `${name}=${value}`)
                .join('; ');
        }
        let body: string | FormData | undefined = request.body;
        if (request.form !== undefined) {
          const form = new FormData();
          for (const field of request.form) {
            if ('value' in field) {
              form.append(field.name, field.value);
              continue;
            }
            const bytes =
              savedFiles.get(field.file) ?? readFileSync(path.resolve(repositoryRoot, field.file));
            // curl's defaults: application/octet-stream, and the file's own name.
            const blob = new Blob([bytes], { type: field.type ?? 'application/octet-stream' });
            form.append(field.name, blob, field.filename ?? path.basename(field.file));
          }
          body = form;
        }
        const response = await fetch(request.url, {
          method: request.method,
          headers: request.headers,
          ...(body === undefined ? {} : { body }),
          signal: AbortSignal.timeout(100_000),
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
        const type = response.headers.get('content-type') ?? '';
        if (request.output !== undefined) {
          const bytes = Buffer.from(await response.arrayBuffer());
          savedFiles.set(request.output, bytes);
          const what = `${request.method} ${request.url} → ${response.status} ${type}, ${bytes.length} bytes saved as ${request.output}`;
          if (command.expectedStatus === null) expect(response.ok, what).toBe(true);
          else expect(response.status, what).toBe(command.expectedStatus);
          return;
        }
        const text = await response.text();
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
          const documented = documentedFields(command.documented);
          const actual = fieldsOf(answer);
          expect(
            documented.keys.filter((key) => !actual.keys.has(key)),
            `fields ${page} shows but ${what} lacks`,
          ).toEqual([]);
          expect(
            documented.values.filter(([key, value]) => !actual.pairs.has(`${key}=${value}`)),
            `values ${page} shows but ${what} differs on`,
          ).toEqual([]);
        }
      },
    );
  });
});
