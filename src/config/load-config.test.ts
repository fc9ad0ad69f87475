import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateApiKey } from '../modules/accounts/api-key-format.js';
import { featureNames } from '../modules/health/feature-catalog.js';
import { ConfigError, loadConfig } from './load-config.js';
import type { RemoteModelDefinition } from './config.js';

function configFile(name: string, content: string): string {
  const directory = mkdtempSync(path.join(tmpdir(), 'config-test-'));
  const file = path.join(directory, name);
  writeFileSync(file, content);
  return file;
}

function problemsOf(run: () => unknown): string[] {
  try {
    run();
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfig', () => {
  it('has the embedded defaults of the contract', () => {
    const config = loadConfig({ env: {}, cwd: '/srv/app' });
    expect(config.server.host).toBe('127.0.0.1');
    expect(config.server.port).toBe(8080);
    expect(config.database).toEqual({ kind: 'sqlite', path: '/srv/app/data/platform.db' });
    expect(config.redisUrl).toBeNull();
    expect(config.rateLimits.defaultTier).toBe('free');
    expect(config.rateLimits.tiers).toMatchObject({
      free: { perMinute: 10, perDay: 100 },
      basic: { perMinute: 60, perDay: 1000 },
      pro: { perMinute: 120, perDay: 5000 },
      enterprise: { perMinute: 500, perDay: 50000 },
    });
    expect(config.version).toMatch(/^\d+\.\d+\.\d+/);
  });

  it('logs every request by default; REQUEST_LOG_SAMPLE takes a fraction from 0 to 1', () => {
    expect(loadConfig({ env: {} }).server.requestLogSample).toBe(1);
    expect(loadConfig({ env: { REQUEST_LOG_SAMPLE: '0.05' } }).server.requestLogSample).toBe(0.05);
    expect(loadConfig({ env: { REQUEST_LOG_SAMPLE: '0' } }).server.requestLogSample).toBe(0);
    for (const bad of ['1.5', '-0.1', 'half']) {
      expect(
        problemsOf(() => loadConfig({ env: { REQUEST_LOG_SAMPLE: bad } })).join(' '),
      ).toContain('REQUEST_LOG_SAMPLE');
    }
  });

  it('returns a deeply frozen object', () => {
    const config = loadConfig({ env: {} });
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.server)).toBe(true);
    expect(Object.isFrozen(config.rateLimits.tiers.free)).toBe(true);
  });

  it('reports every bad environment variable at once, by name', () => {
    const problems = problemsOf(() =>
      loadConfig({
        env: {
          PORT: 'eighty',
          DATABASE_URL: 'mysql://x',
          REDIS_URL: 'http://x',
          TRUST_PROXY: '10.0.0.0/8, not-an-address',
          LOG_LEVEL: 'loud',
          PLATFORM_ADMIN_KEY: 'sk-short',
        },
      }),
    );
    const names = problems.map((problem) => problem.split(':')[0]);
    expect(names).toEqual(
      expect.arrayContaining([
        'PORT',
        'DATABASE_URL',
        'REDIS_URL',
        'TRUST_PROXY',
        'LOG_LEVEL',
        'PLATFORM_ADMIN_KEY',
      ]),
    );
    expect(problems.find((problem) => problem.startsWith('TRUST_PROXY'))).toContain(
      'not-an-address',
    );
  });

  it('reads a YAML file and lets the environment win over it', () => {
    const file = configFile(
      'platform.config.yaml',
      'port: 9000\nhost: 0.0.0.0\nrate_limits:\n  tiers:\n    free: {per_minute: 3, per_day: 7}\n    gold: {per_minute: 1000, per_day: 100000}\n',
    );
    const config = loadConfig({ env: { PLATFORM_CONFIG: file, PORT: '9100' } });
    expect(config.server.port).toBe(9100);
    expect(config.server.host).toBe('0.0.0.0');
    expect(config.rateLimits.tiers.free).toEqual({ perMinute: 3, perDay: 7 });
    expect(config.rateLimits.tiers.gold).toEqual({ perMinute: 1000, perDay: 100000 });
    expect(config.configFile).toBe(file);
  });

  it('accepts a JSON file', () => {
    const file = configFile(
      'platform.config.json',
      JSON.stringify({ trust_proxy: ['10.0.0.0/8', '::1'] }),
    );
    expect(loadConfig({ env: { PLATFORM_CONFIG: file } }).server.trustProxy).toEqual([
      '10.0.0.0/8',
      '::1',
    ]);
  });

  it('names the file and the path of every problem in it, unknown keys included', () => {
    const file = configFile(
      'platform.config.json',
      JSON.stringify({ prot: 1, rate_limits: { tiers: { free: { per_minute: -1, per_day: 5 } } } }),
    );
    const problems = problemsOf(() => loadConfig({ env: { PLATFORM_CONFIG: file } }));
    expect(
      problems.some(
        (problem) => problem.startsWith(`${file}: (top level)`) && problem.includes('prot'),
      ),
    ).toBe(true);
    expect(
      problems.some((problem) => problem.startsWith(`${file}: rate_limits.tiers.free.per_minute`)),
    ).toBe(true);
  });

  it('reports a missing or unparsable file', () => {
    expect(
      problemsOf(() => loadConfig({ env: { PLATFORM_CONFIG: '/nonexistent/x.yaml' } }))[0],
    ).toMatch(/^PLATFORM_CONFIG: file/);
    const broken = configFile('broken.json', '{"port": ');
    expect(problemsOf(() => loadConfig({ env: { PLATFORM_CONFIG: broken } }))[0]).toContain(
      'not valid JSON',
    );
  });

  it('switches every feature on unless the file switches it off', () => {
    const config = loadConfig({ env: {}, overrides: { features: { policy_engine: false } } });
    expect(Object.entries(config.features).filter(([, on]) => !on)).toEqual([
      ['policy_engine', false],
    ]);
    expect(Object.keys(config.features).sort()).toEqual([...featureNames].sort());
  });

  it('refuses a default tier that is not defined', () => {
    const problems = problemsOf(() =>
      loadConfig({ env: {}, overrides: { rate_limits: { default_tier: 'platinum' } } }),
    );
    expect(problems[0]).toContain('rate_limits.default_tier');
  });

  it('takes a well-formed PLATFORM_ADMIN_KEY and a postgres DATABASE_URL', () => {
    const key = generateApiKey();
    const config = loadConfig({
      env: { PLATFORM_ADMIN_KEY: key, DATABASE_URL: 'postgres://u:p@db:5432/platform' },
    });
    expect(config.auth.adminKey).toBe(key);
    expect(config.database).toEqual({ kind: 'postgres', url: 'postgres://u:p@db:5432/platform' });
  });

  it('takes an empty variable for an unset one (a compose file’s KEY=), but an empty list for a list', () => {
    const config = loadConfig({
      env: { PLATFORM_ADMIN_KEY: '', REDIS_URL: '', PORT: '', CORS_ORIGINS: '' },
    });
    expect(config.auth.adminKey).toBeNull();
    expect(config.redisUrl).toBeNull();
    expect(config.server.port).toBe(8080);
    expect(config.server.corsOrigins).toEqual([]);
  });

  it('joins the Redis key prefix with one colon, whether or not it ends with one', () => {
    expect(loadConfig({ env: { REDIS_KEY_PREFIX: 'team-a' } }).redisKeyPrefix).toBe('team-a');
    expect(loadConfig({ env: { REDIS_KEY_PREFIX: 'team-a:' } }).redisKeyPrefix).toBe('team-a');
    expect(problemsOf(() => loadConfig({ env: { REDIS_KEY_PREFIX: 'team:a' } }))[0]).toContain(
      'REDIS_KEY_PREFIX',
    );
  });

  it('connects to PostgreSQL as the operating-system user when neither the URL nor PGUSER names one', () => {
    const bare = loadConfig({ env: { DATABASE_URL: 'postgres://db:5432/platform' } });
    expect(bare.database).toEqual({
      kind: 'postgres',
      url: `postgres://${encodeURIComponent(userInfo().username)}@db:5432/platform`,
    });
    const withPgUser = loadConfig({
      env: { DATABASE_URL: 'postgres://db:5432/platform', PGUSER: 'app' },
    });
    expect(withPgUser.database).toEqual({ kind: 'postgres', url: 'postgres://db:5432/platform' });
  });

  it('uses the built-in catalog, with the local model as default, when the file defines none', () => {
    const config = loadConfig({ env: {}, cwd: '/srv/app' });
    expect(config.models.defaultModel).toBe('qwen2.5-0.5b-instruct');
    const local = config.models.definitions.find((model) => model.provider === 'local');
    expect(local).toMatchObject({
      file: '/srv/app/data/models/qwen2.5-0.5b-instruct-q4_k_m.gguf',
      source: 'hf:Qwen/Qwen2.5-0.5B-Instruct-GGUF/qwen2.5-0.5b-instruct-q4_k_m.gguf',
    });
    expect(config.models.definitions.map((model) => model.provider)).toEqual(
      expect.arrayContaining(['openai', 'anthropic', 'google']),
    );
  });

  it('replaces the built-in catalog with the configured one and reads keys only when asked', () => {
    const file = configFile(
      'platform.config.json',
      JSON.stringify({
        default_model: 'my-model',
        models: [
          {
            name: 'my-model',
            display_name: 'My model',
            provider: 'openai-compatible',
            model: 'upstream-model-id',
            base_url: 'http://127.0.0.1:9000/v1',
            api_key_env: 'MY_PROVIDER_KEY',
            max_tokens: 1024,
            context_length: 8192,
            fallbacks: ['other-model'],
          },
          { name: 'other-model', provider: 'openai', model: 'gpt-4o-mini' },
        ],
      }),
    );
    const env: Record<string, string | undefined> = { PLATFORM_CONFIG: file };
    const config = loadConfig({ env });
    // The chat models replace the built-in ones; the kinds it lists none of keep the built-in
    // offline engines (speech.builtin_engines, default true).
    expect(config.models.definitions.map((model) => model.name)).toEqual([
      'my-model',
      'other-model',
      'pocketsphinx-en-us',
      'whisper-tiny',
      'espeak-ng',
    ]);
    expect(config.models.definitions[0]).toMatchObject({
      provider: 'openai-compatible',
      model: 'upstream-model-id',
      apiKeyEnv: 'MY_PROVIDER_KEY',
      fallbacks: ['other-model'],
    });
    expect(config.models.definitions[1]).toMatchObject({ apiKeyEnv: 'OPENAI_API_KEY' });
    expect(JSON.stringify(config)).not.toContain('sk-secret');
    env.MY_PROVIDER_KEY = 'sk-secret';
    expect(config.secrets.get('MY_PROVIDER_KEY')).toBe('sk-secret');
  });

  it('keeps the built-in speech engines only for the kinds a file does not list, unless told not to', () => {
    const chat = {
      name: 'chat',
      provider: 'openai-compatible',
      model: 'm',
      base_url: 'http://127.0.0.1:9/v1',
    };
    const load = (body: object) =>
      loadConfig({
        env: { PLATFORM_CONFIG: configFile('engines.json', JSON.stringify(body)) },
      }).models.definitions.map((model) => model.name);
    expect(load({ models: [chat] })).toEqual([
      'chat',
      'pocketsphinx-en-us',
      'whisper-tiny',
      'espeak-ng',
    ]);
    // A speech model listed: the built-in synthesiser is replaced, the recognisers stay.
    expect(
      load({ models: [chat, { name: 'voice', provider: 'espeak-ng', type: 'speech' }] }),
    ).toEqual(['chat', 'voice', 'pocketsphinx-en-us', 'whisper-tiny']);
    expect(load({ models: [chat], speech: { builtin_engines: false } })).toEqual(['chat']);
  });

  it('takes aliases on speech models (one model each, no model’s name) and openai_aliases', () => {
    const load = (body: object) =>
      loadConfig({ env: { PLATFORM_CONFIG: configFile('aliases.json', JSON.stringify(body)) } });
    const listen = { name: 'listen', provider: 'pocketsphinx', type: 'transcription' };
    const speak = { name: 'speak', provider: 'espeak-ng', type: 'speech' };
    const config = load({ models: [{ ...listen, aliases: ['whisper-1', 'stt'] }, speak] });
    expect(config.models.definitions[0]?.speech?.aliases).toEqual(['whisper-1', 'stt']);
    expect(config.models.definitions[1]?.speech?.aliases).toEqual([]);
    expect(config.speech.openAiAliases).toBe(true);
    expect(
      load({ models: [listen, speak], speech: { openai_aliases: false } }).speech,
    ).toMatchObject({ openAiAliases: false });
    const problems = problemsOf(() =>
      load({
        models: [
          { ...listen, aliases: ['speak', 'shared'] },
          { ...speak, aliases: ['shared'] },
          { name: 'chat', provider: 'openai', model: 'm', aliases: ['c'] },
        ],
      }),
    ).join('\n');
    expect(problems).toContain("'speak' is the name of a model");
    expect(problems).toContain("'shared' is already an alias of 'listen'");
    expect(problems).toContain("only transcription and speech models take 'aliases'");
  });

  it('reports every catalog problem at once', () => {
    const file = configFile(
      'platform.config.yaml',
      [
        'default_model: missing',
        'models:',
        '  - { name: a, provider: openai-compatible, model: m }',
        '  - { name: b, provider: openai, model: m, fallbacks: [nope, b] }',
        '  - { name: b, provider: local }',
        '  - { name: c, provider: openai, model: m, max_tokens: 9000, context_length: 8192 }',
        '  - { name: d, provider: anthropic, model: m, threads: 2 }',
      ].join('\n'),
    );
    const problems = problemsOf(() => loadConfig({ env: { PLATFORM_CONFIG: file } }));
    const text = problems.join('\n');
    expect(text).toContain('models[0].base_url');
    expect(text).toContain("'nope' is not a defined model");
    expect(text).toContain('cannot fall back to itself');
    expect(text).toContain("'b' is defined twice");
    expect(text).toContain("needs 'file'");
    expect(text).toContain('max_tokens must be smaller than context_length');
    expect(text).toContain('models[4].threads');
    expect(text).toContain("default_model: 'missing' is not a defined model");
  });

  it('builds a model of deployments, and reports what is wrong with them', () => {
    const good = configFile(
      'deployments.yaml',
      [
        'models:',
        '  - name: pool',
        '    provider: openai',
        '    model: gpt-4o-mini',
        '    max_attempts: 3',
        '    pricing: { input_per_mtok: 0.15, output_per_mtok: 0.6 }',
        '    deployments:',
        '      - { name: east, weight: 3, rpm: 600 }',
        '      - { provider: openai-compatible, base_url: "http://10.0.0.5:8000/v1", model: m2, pricing: { input_per_mtok: 0 } }',
      ].join('\n'),
    );
    const [pool] = loadConfig({ env: { PLATFORM_CONFIG: good } }).models.definitions;
    expect(pool).toMatchObject({ name: 'pool', maxAttempts: 3 });
    const deployments = (pool as RemoteModelDefinition).deployments;
    expect(
      deployments.map((deployment) => [deployment.name, deployment.weight, deployment.rpm]),
    ).toEqual([
      ['east', 3, 600],
      ['deployment-2', 1, null],
    ]);
    expect(deployments[0]!.definition).toMatchObject({
      provider: 'openai',
      model: 'gpt-4o-mini',
      apiKeyEnv: 'OPENAI_API_KEY',
      maxRetries: 0,
      pricing: { inputPerMtok: 150_000, outputPerMtok: 600_000 },
    });
    expect(deployments[1]!.definition).toMatchObject({
      provider: 'openai-compatible',
      model: 'm2',
      baseUrl: 'http://10.0.0.5:8000/v1',
      apiKeyEnv: null,
      pricing: { inputPerMtok: 0, outputPerMtok: null },
    });
    const bad = configFile(
      'bad-deployments.yaml',
      [
        'models:',
        '  - name: pool',
        '    provider: openai',
        '    model: gpt-4o-mini',
        '    deployments: [{ name: x }, { name: x }, { provider: openai-compatible }]',
        '  - { name: e, provider: openai, type: embedding, model: t, deployments: [{}] }',
      ].join('\n'),
    );
    const text = problemsOf(() => loadConfig({ env: { PLATFORM_CONFIG: bad } })).join('\n');
    expect(text).toContain("deployments[1].name: 'x' is used twice");
    expect(text).toContain(
      'deployments[2].base_url: an openai-compatible deployment needs a base URL',
    );
    expect(text).toContain(
      'models[1].deployments: only chat models of a remote provider take deployments',
    );
    const zero = configFile(
      'zero-weight.yaml',
      'models:\n  - { name: f, provider: openai, model: m, deployments: [{ weight: 0 }] }',
    );
    expect(problemsOf(() => loadConfig({ env: { PLATFORM_CONFIG: zero } })).join('\n')).toContain(
      'models.0.deployments.0.weight',
    );
  });

  it('names a malformed SSRF allow-list entry', () => {
    const file = configFile(
      'platform.config.json',
      JSON.stringify({ web: { allowed_private_targets: ['10.0.0.0/8', 'not a host!'] } }),
    );
    const problems = problemsOf(() => loadConfig({ env: { PLATFORM_CONFIG: file } }));
    expect(problems.join('\n')).toContain("web.allowed_private_targets[1] 'not a host!'");
  });
});
