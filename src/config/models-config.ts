// The model catalog and prompt templates of the configuration: file schema, built-in defaults,
// and the cross-checks (names unique, default and fallbacks defined) that need the whole list.
import path from 'node:path';
import Mustache from 'mustache';
import { z } from 'zod';
import { isForbiddenKey } from '../validation/safe-keys.js';
import {
  modelTypes,
  type EngineModelDefinition,
  type LocalModelDefinition,
  type ModelDefinition,
  type ModelProvider,
  type ModelType,
  type SpeechEngineProvider,
  type SpeechSettings,
  type TemplateDefinition,
} from './config.js';

export const modelProviders = [
  'openai',
  'anthropic',
  'google',
  'openai-compatible',
  'local',
  'deepgram',
  'espeak-ng',
  'sherpa-onnx',
  'pocketsphinx',
] as const satisfies readonly ModelProvider[];

/** Which kinds of model each connection can serve. */
export const typesOfProvider: Record<ModelProvider, readonly ModelType[]> = {
  openai: ['chat', 'embedding', 'transcription', 'speech'],
  anthropic: ['chat'],
  google: ['chat', 'embedding'],
  'openai-compatible': ['chat', 'embedding', 'transcription', 'speech'],
  local: ['chat', 'embedding'],
  deepgram: ['transcription', 'speech'],
  'espeak-ng': ['speech'],
  'sherpa-onnx': ['transcription'],
  pocketsphinx: ['transcription'],
};

const speechEngineProviders: readonly SpeechEngineProvider[] = [
  'espeak-ng',
  'sherpa-onnx',
  'pocketsphinx',
];

function isSpeechEngine(provider: ModelProvider): provider is SpeechEngineProvider {
  return (speechEngineProviders as readonly string[]).includes(provider);
}

/** sherpa-onnx model families this service knows how to load, and the files each needs. */
export const sherpaArchitectures = {
  whisper: ['encoder', 'decoder', 'tokens'],
  transducer: ['encoder', 'decoder', 'joiner', 'tokens'],
  sense_voice: ['model', 'tokens'],
  paraformer: ['model', 'tokens'],
  nemo_ctc: ['model', 'tokens'],
  zipformer_ctc: ['model', 'tokens'],
  tdnn: ['model', 'tokens'],
} as const;

export type SherpaArchitecture = keyof typeof sherpaArchitectures;

const modelName = z
  .string()
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$/,
    'letters, digits and . _ : / - only, at most 128 characters',
  );

const environmentVariableName = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'the name of an environment variable');

const languageTag = z
  .string()
  .regex(/^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$/, 'a language tag such as en or en-US');

/** Where a model file comes from and how it is checked: local models and speech engines' files. */
const modelFileFields = {
  source: z
    .string()
    .regex(/^(hf:[^/\s]+\/[^/\s]+\/\S+|https?:\/\/\S+)$/, "'hf:owner/repo/file' or a URL")
    .optional(),
  file: z.string().min(1).optional(),
  sha256: z
    .string()
    .regex(/^[0-9a-f]{64}$/, '64 lower-case hex digits')
    .optional(),
};
const modelFileSchema = z.strictObject(modelFileFields);

export const modelEntrySchema = z.strictObject({
  name: modelName,
  display_name: z.string().min(1).max(200).optional(),
  /** How the service reaches the model. */
  provider: z.enum(modelProviders),
  /** Who made the model, shown as the catalog's `provider` (default: see makerOf). */
  maker: z.string().min(1).max(100).optional(),
  /** The provider's own model id (for `local`: a label; the file is `file` or `source`). */
  model: z.string().min(1).max(256).optional(),
  type: z.enum(modelTypes).optional(),
  base_url: z.url({ protocol: /^https?$/ }).optional(),
  api_key_env: environmentVariableName.optional(),
  max_tokens: z.int().min(1).max(1_000_000).optional(),
  context_length: z.int().min(16).max(10_000_000).optional(),
  fallbacks: z.array(modelName).max(10).optional(),
  timeout_ms: z.int().min(100).max(3_600_000).optional(),
  /** Longest silence of a streamed answer: before its first chunk and between two chunks. */
  idle_timeout_ms: z.int().min(100).max(3_600_000).optional(),
  max_retries: z.int().min(0).max(10).optional(),
  // What the router's strategies weigh (see docs/routing-and-layout.md, "Strategies"); all optional.
  /** US dollars per million prompt tokens (0 for local models). */
  input_cost_per_million: z.number().min(0).max(10_000).optional(),
  /** US dollars per million completion tokens. */
  output_cost_per_million: z.number().min(0).max(10_000).optional(),
  /** Relative answer quality, 0–100 (a leaderboard score or your own judgement). */
  quality: z.number().min(0).max(100).optional(),
  /** Typical time to the first token, in milliseconds. */
  typical_latency_ms: z.int().min(0).max(600_000).optional(),
  /** openai-compatible: the server accepts `response_format: json_schema` (else JSON mode). */
  structured_outputs: z.boolean().optional(),
  // Local models only.
  ...modelFileFields,
  threads: z.int().min(1).max(256).optional(),
  parallel: z.int().min(1).max(64).optional(),
  queue_size: z.int().min(0).max(10_000).optional(),
  // Transcription and speech models.
  /** Voices a speech model offers (engines that list their own need none). */
  voices: z
    .array(
      z.strictObject({
        id: z.string().min(1).max(128),
        name: z.string().min(1).max(200).optional(),
        languages: z.array(languageTag).max(100).optional(),
      }),
    )
    .max(1000)
    .optional(),
  default_voice: z.string().min(1).max(128).optional(),
  /** Languages a recogniser understands. */
  languages: z.array(languageTag).max(200).optional(),
  /** sherpa-onnx: the model family of `files`. */
  architecture: z.enum(Object.keys(sherpaArchitectures) as [SherpaArchitecture]).optional(),
  /** sherpa-onnx: the model's files by role (encoder, decoder, joiner, model, tokens). */
  files: z.record(z.string().regex(/^[a-z_]{1,32}$/), modelFileSchema).optional(),
  /** pocketsphinx: the program (default pocketsphinx_continuous) and acoustic model directory. */
  command: z.string().min(1).max(1024).optional(),
  model_directory: z.string().min(1).max(1024).optional(),
});

export type ModelEntry = z.infer<typeof modelEntrySchema>;

/** A template variable's name: a view key of its Mustache template, so never a reserved name. */
const variableName = z
  .string()
  .regex(/^[a-z0-9_]{1,64}$/)
  .refine((name) => !isForbiddenKey(name), 'a reserved name (__proto__, constructor, prototype)');

export const templateEntrySchema = z.strictObject({
  name: z.string().regex(/^[a-z0-9_]{1,64}$/, 'lower-case letters, digits and _ only'),
  display_name: z.string().min(1).max(200),
  description: z.string().max(2000).default(''),
  system_prompt: z.string().min(1).max(100_000),
  variables: z
    .array(
      z.union([
        variableName,
        z.strictObject({
          name: variableName,
          required: z.boolean().default(false),
          description: z.string().max(1000).default(''),
          default: z.string().max(10_000).nullable().default(null),
        }),
      ]),
    )
    .max(50)
    .default([]),
  example_usage: z.string().max(10_000).default(''),
});

export type TemplateEntry = z.infer<typeof templateEntrySchema>;

/** The provider's conventional environment variable for its key. */
export const defaultApiKeyEnv: Record<ModelProvider, string | null> = {
  openai: 'OPENAI_API_KEY',
  anthropic: 'ANTHROPIC_API_KEY',
  google: 'GOOGLE_GENERATIVE_AI_API_KEY',
  'openai-compatible': null,
  local: null,
  deepgram: 'DEEPGRAM_API_KEY',
  'espeak-ng': null,
  'sherpa-onnx': null,
  pocketsphinx: null,
};

/** The maker a first-party provider implies; others name it with `maker` or in the model id. */
const makerOfProvider: Partial<Record<ModelProvider, string>> = {
  openai: 'OpenAI',
  anthropic: 'Anthropic',
  google: 'Google',
  deepgram: 'Deepgram',
  'espeak-ng': 'eSpeak NG',
  pocketsphinx: 'Carnegie Mellon University',
};

/** Organisations on the Hugging Face Hub and the makers they publish for. */
const makerOfHubOwner: Record<string, string> = {
  qwen: 'Alibaba',
  'meta-llama': 'Meta',
  mistralai: 'Mistral AI',
  google: 'Google',
  microsoft: 'Microsoft',
  deepseek: 'DeepSeek',
  'deepseek-ai': 'DeepSeek',
  openai: 'OpenAI',
};

/** Model families whose id says who made them, whoever serves them. */
const makerOfModelFamily: readonly (readonly [RegExp, string])[] = [
  [/^(gpt-|o\d|text-embedding-|chatgpt|dall-e|whisper|tts-)/, 'OpenAI'],
  [/^claude/, 'Anthropic'],
  [/^(gemini|gemma|text-embedding-00|embedding-00)/, 'Google'],
  [/^(llama|meta-llama|codellama)/, 'Meta'],
  [/^(qwen|qwq)/, 'Alibaba'],
  [/^(mistral|mixtral|codestral|ministral|pixtral)/, 'Mistral AI'],
  [/^deepseek/, 'DeepSeek'],
  [/^phi-/, 'Microsoft'],
];

/**
 * The spec's `provider` — who made the model: `maker` when configured, the vendor for the three
 * first-party providers, the owner in a Hub-style id (`Qwen/…` → Alibaba), a well-known model
 * family in the id (`llama-3.1-8b` → Meta), else "unknown".
 */
export function makerOf(entry: ModelEntry): string {
  if (entry.maker !== undefined) return entry.maker;
  const vendor = makerOfProvider[entry.provider];
  if (vendor !== undefined) return vendor;
  const id = entry.model ?? entry.source?.replace(/^hf:/, '') ?? '';
  const [owner, rest] = id.split('/');
  if (owner !== undefined && rest !== undefined && owner !== '') {
    return makerOfHubOwner[owner.toLowerCase()] ?? owner;
  }
  const family = makerOfModelFamily.find(([pattern]) => pattern.test(id.toLowerCase()));
  return family?.[1] ?? 'unknown';
}

/** The default local model: small, Apache-2.0, instruction-tuned, ~400 MB (see docs/decisions.md). */
export const defaultLocalModel: ModelEntry = {
  name: 'qwen2.5-0.5b-instruct',
  display_name: 'Qwen2.5 0.5B Instruct (local, Q4_K_M)',
  provider: 'local',
  maker: 'Alibaba',
  model: 'Qwen/Qwen2.5-0.5B-Instruct-GGUF',
  source: 'hf:Qwen/Qwen2.5-0.5B-Instruct-GGUF/qwen2.5-0.5b-instruct-q4_k_m.gguf',
  max_tokens: 1024,
  context_length: 4096,
  input_cost_per_million: 0,
  output_cost_per_million: 0,
  quality: 20,
  typical_latency_ms: 400,
};

/** Used when the config file defines no `models`: the local default plus common providers. */
export const builtInModels: readonly ModelEntry[] = [
  defaultLocalModel,
  {
    name: 'gpt-4o-mini',
    display_name: 'GPT-4o mini',
    provider: 'openai',
    model: 'gpt-4o-mini',
    max_tokens: 16_384,
    context_length: 128_000,
    input_cost_per_million: 0.15,
    output_cost_per_million: 0.6,
    quality: 70,
    typical_latency_ms: 500,
  },
  {
    name: 'claude-3-5-haiku',
    display_name: 'Claude 3.5 Haiku',
    provider: 'anthropic',
    model: 'claude-3-5-haiku-latest',
    max_tokens: 8192,
    context_length: 200_000,
    input_cost_per_million: 0.8,
    output_cost_per_million: 4,
    quality: 68,
    typical_latency_ms: 700,
  },
  {
    name: 'gemini-2.0-flash',
    display_name: 'Gemini 2.0 Flash',
    provider: 'google',
    model: 'gemini-2.0-flash',
    max_tokens: 8192,
    context_length: 1_048_576,
    input_cost_per_million: 0.1,
    output_cost_per_million: 0.4,
    quality: 72,
    typical_latency_ms: 450,
  },
  {
    name: 'text-embedding-3-small',
    display_name: 'OpenAI text-embedding-3-small',
    provider: 'openai',
    model: 'text-embedding-3-small',
    type: 'embedding',
    max_tokens: 1,
    context_length: 8191,
  },
  ...builtInSpeechModels(),
];

/**
 * Speech models offered out of the box: the system's pocketsphinx and espeak-ng (no download),
 * Whisper tiny through sherpa-onnx (`npm run models -- pull whisper-tiny`), and the cloud ones
 * that become available when their key is set. See docs/decisions.md ("Speech").
 */
function builtInSpeechModels(): ModelEntry[] {
  const whisper = 'hf:csukuangfj/sherpa-onnx-whisper-tiny';
  return [
    {
      name: 'pocketsphinx-en-us',
      display_name: 'PocketSphinx US English (offline, system package)',
      provider: 'pocketsphinx',
      model: 'en-us',
      type: 'transcription',
      languages: ['en-US'],
    },
    {
      name: 'whisper-tiny',
      display_name: 'Whisper tiny, multilingual (offline, sherpa-onnx int8)',
      provider: 'sherpa-onnx',
      maker: 'OpenAI',
      model: 'csukuangfj/sherpa-onnx-whisper-tiny',
      type: 'transcription',
      architecture: 'whisper',
      files: {
        encoder: { source: `${whisper}/tiny-encoder.int8.onnx` },
        decoder: { source: `${whisper}/tiny-decoder.int8.onnx` },
        tokens: { source: `${whisper}/tiny-tokens.txt` },
      },
    },
    {
      name: 'espeak-ng',
      display_name: 'eSpeak NG (offline, WebAssembly, 100+ languages)',
      provider: 'espeak-ng',
      model: 'espeak-ng',
      type: 'speech',
      default_voice: 'en-us',
    },
    {
      name: 'whisper-1',
      display_name: 'OpenAI Whisper',
      provider: 'openai',
      model: 'whisper-1',
      type: 'transcription',
    },
    {
      name: 'tts-1',
      display_name: 'OpenAI TTS',
      provider: 'openai',
      model: 'tts-1',
      type: 'speech',
      default_voice: 'alloy',
      voices: ['alloy', 'ash', 'coral', 'echo', 'fable', 'nova', 'onyx', 'sage', 'shimmer'].map(
        (id) => ({ id }),
      ),
    },
    {
      name: 'deepgram-nova-3',
      display_name: 'Deepgram Nova-3',
      provider: 'deepgram',
      model: 'nova-3',
      type: 'transcription',
    },
    {
      name: 'deepgram-aura-2',
      display_name: 'Deepgram Aura-2',
      provider: 'deepgram',
      model: 'aura-2',
      type: 'speech',
      default_voice: 'aura-2-thalia-en',
      voices: [
        { id: 'aura-2-thalia-en', name: 'Thalia', languages: ['en-US'] },
        { id: 'aura-2-andromeda-en', name: 'Andromeda', languages: ['en-US'] },
        { id: 'aura-2-apollo-en', name: 'Apollo', languages: ['en-US'] },
        { id: 'aura-2-arcas-en', name: 'Arcas', languages: ['en-US'] },
      ],
    },
  ];
}

/** The built-in engines that run on this machine without a key (no cloud speech models). */
const offlineEngineProviders = new Set(['pocketsphinx', 'sherpa-onnx', 'espeak-ng']);

/**
 * A config file that lists models but none of a speech kind keeps the built-in offline engines of
 * that kind (PocketSphinx and Whisper tiny for transcription, eSpeak NG for speech), so that adding
 * a chat model does not switch voice off. Listing a model of the kind, or
 * `speech.builtin_engines: false`, replaces them.
 */
function builtInEnginesFor(entries: readonly ModelEntry[]): ModelEntry[] {
  const kinds = new Set(entries.map((entry) => entry.type ?? 'chat'));
  const names = new Set(entries.map((entry) => entry.name));
  return builtInSpeechModels().filter(
    (entry) =>
      offlineEngineProviders.has(entry.provider) &&
      !kinds.has(entry.type ?? 'chat') &&
      !names.has(entry.name),
  );
}

export interface ModelDefaults {
  modelsDirectory: string;
  localThreads: number;
  timeoutMs: number;
  idleTimeoutMs: number;
  maxRetries: number;
}

function fileNameOf(source: string): string {
  const last = source.split('/').pop() ?? 'model.gguf';
  return last.split('?')[0] ?? 'model.gguf';
}

function toDefinition(
  entry: ModelEntry,
  defaults: ModelDefaults,
  cwd: string,
  problems: string[],
  label: string,
): ModelDefinition | null {
  const base = {
    name: entry.name,
    displayName: entry.display_name ?? entry.name,
    maker: makerOf(entry),
    type: entry.type ?? 'chat',
    maxTokens: entry.max_tokens ?? 1024,
    contextLength: entry.context_length ?? 8192,
    fallbacks: entry.fallbacks ?? [],
    timeoutMs: entry.timeout_ms ?? defaults.timeoutMs,
    idleTimeoutMs: Math.min(
      entry.idle_timeout_ms ?? defaults.idleTimeoutMs,
      entry.timeout_ms ?? defaults.timeoutMs,
    ),
    maxRetries: entry.max_retries ?? defaults.maxRetries,
    routing: {
      inputCostPerMillion: entry.input_cost_per_million ?? (entry.provider === 'local' ? 0 : null),
      outputCostPerMillion:
        entry.output_cost_per_million ?? (entry.provider === 'local' ? 0 : null),
      quality: entry.quality ?? null,
      typicalLatencyMs: entry.typical_latency_ms ?? null,
    },
    speech: speechSettingsOf(entry, problems, label),
  };
  if (base.type === 'chat' && base.maxTokens >= base.contextLength) {
    problems.push(`${label}: max_tokens must be smaller than context_length`);
  }
  if (!typesOfProvider[entry.provider].includes(base.type)) {
    problems.push(
      `${label}.type: provider '${entry.provider}' serves ${typesOfProvider[entry.provider].join(', ')} models, not ${base.type}`,
    );
    return null;
  }
  const speechOnly = ['voices', 'default_voice', 'languages'] as const;
  if (base.type === 'chat' || base.type === 'embedding') {
    for (const field of speechOnly) {
      if (entry[field] !== undefined) {
        problems.push(`${label}.${field}: only transcription and speech models take '${field}'`);
      }
    }
  }
  if (isSpeechEngine(entry.provider)) {
    return engineDefinition(entry, entry.provider, base, defaults, cwd, problems, label);
  }
  for (const engineOnly of ['architecture', 'files', 'command', 'model_directory'] as const) {
    if (entry[engineOnly] !== undefined) {
      problems.push(
        `${label}.${engineOnly}: only speech engines on this machine take '${engineOnly}'`,
      );
    }
  }
  if (entry.provider === 'local') {
    if (entry.file === undefined && entry.source === undefined) {
      problems.push(`${label}: a local model needs 'file' (a GGUF path) or 'source' (hf:… or URL)`);
      return null;
    }
    for (const remoteOnly of ['base_url', 'api_key_env', 'structured_outputs'] as const) {
      if (entry[remoteOnly] !== undefined) {
        problems.push(`${label}.${remoteOnly}: not used by local models`);
      }
    }
    const file =
      entry.file !== undefined
        ? path.resolve(cwd, entry.file)
        : path.join(defaults.modelsDirectory, fileNameOf(entry.source ?? ''));
    const local: LocalModelDefinition = {
      ...base,
      provider: 'local',
      model: entry.model ?? entry.name,
      source: entry.source ?? null,
      file,
      sha256: entry.sha256 ?? null,
      threads: entry.threads ?? defaults.localThreads,
      parallel: entry.parallel ?? 1,
      queueSize: entry.queue_size ?? 32,
    };
    return local;
  }
  for (const localOnly of [
    'source',
    'file',
    'sha256',
    'threads',
    'parallel',
    'queue_size',
  ] as const) {
    if (entry[localOnly] !== undefined) {
      problems.push(`${label}.${localOnly}: only local models take '${localOnly}'`);
    }
  }
  if (entry.model === undefined) {
    problems.push(`${label}.model: the provider's model id is required`);
    return null;
  }
  if (entry.provider === 'openai-compatible' && entry.base_url === undefined) {
    problems.push(`${label}.base_url: an openai-compatible model needs the server's base URL`);
    return null;
  }
  return {
    ...base,
    provider: entry.provider,
    model: entry.model,
    baseUrl: entry.base_url ?? null,
    apiKeyEnv: entry.api_key_env ?? defaultApiKeyEnv[entry.provider],
    structuredOutputs: entry.structured_outputs ?? entry.provider !== 'openai-compatible',
  };
}

function speechSettingsOf(
  entry: ModelEntry,
  problems: string[],
  label: string,
): SpeechSettings | null {
  const type = entry.type ?? 'chat';
  if (type !== 'transcription' && type !== 'speech') return null;
  const voices = (entry.voices ?? []).map((voice) => ({
    id: voice.id,
    name: voice.name ?? voice.id,
    languages: voice.languages ?? [],
  }));
  if (
    entry.default_voice !== undefined &&
    voices.length > 0 &&
    !voices.some((voice) => voice.id === entry.default_voice)
  ) {
    problems.push(`${label}.default_voice: '${entry.default_voice}' is not one of its voices`);
  }
  if (
    type === 'transcription' &&
    (entry.voices !== undefined || entry.default_voice !== undefined)
  ) {
    problems.push(`${label}.voices: a transcription model has no voices`);
  }
  return {
    voices,
    defaultVoice: entry.default_voice ?? voices[0]?.id ?? null,
    languages: entry.languages ?? [],
  };
}

type DefinitionBase = Omit<
  EngineModelDefinition,
  'provider' | 'model' | 'architecture' | 'files' | 'threads' | 'command' | 'modelDirectory'
>;

/** A model served by espeak-ng, sherpa-onnx or pocketsphinx on this machine. */
function engineDefinition(
  entry: ModelEntry,
  provider: SpeechEngineProvider,
  base: DefinitionBase,
  defaults: ModelDefaults,
  cwd: string,
  problems: string[],
  label: string,
): EngineModelDefinition | null {
  for (const remoteOnly of [
    'base_url',
    'api_key_env',
    'structured_outputs',
    'source',
    'file',
    'sha256',
    'parallel',
    'queue_size',
  ] as const) {
    if (entry[remoteOnly] !== undefined) {
      problems.push(`${label}.${remoteOnly}: not used by ${provider} models`);
    }
  }
  const files: EngineModelDefinition['files'][number][] = [];
  let architecture: SherpaArchitecture | null = null;
  if (provider === 'sherpa-onnx') {
    if (entry.architecture === undefined) {
      problems.push(
        `${label}.architecture: a sherpa-onnx model needs its family (${Object.keys(sherpaArchitectures).join(', ')})`,
      );
      return null;
    }
    architecture = entry.architecture;
    const given = entry.files ?? {};
    for (const role of sherpaArchitectures[architecture]) {
      const spec = given[role];
      if (spec === undefined || (spec.file === undefined && spec.source === undefined)) {
        problems.push(
          `${label}.files.${role}: a ${architecture} model needs its ${role} file ('file' or 'source')`,
        );
        continue;
      }
      const directory = path.join(defaults.modelsDirectory, entry.name);
      files.push({
        role,
        source: spec.source ?? null,
        file:
          spec.file !== undefined
            ? path.resolve(cwd, spec.file)
            : path.join(directory, fileNameOf(spec.source ?? '')),
        sha256: spec.sha256 ?? null,
      });
    }
    for (const role of Object.keys(given)) {
      if (!(sherpaArchitectures[architecture] as readonly string[]).includes(role)) {
        problems.push(
          `${label}.files.${role}: a ${architecture} model takes ${sherpaArchitectures[architecture].join(', ')}`,
        );
      }
    }
  } else {
    for (const sherpaOnly of ['architecture', 'files'] as const) {
      if (entry[sherpaOnly] !== undefined) {
        problems.push(`${label}.${sherpaOnly}: only sherpa-onnx models take '${sherpaOnly}'`);
      }
    }
  }
  if (provider !== 'pocketsphinx') {
    for (const field of ['command', 'model_directory'] as const) {
      if (entry[field] !== undefined)
        problems.push(`${label}.${field}: only pocketsphinx models take '${field}'`);
    }
  }
  return {
    ...base,
    provider,
    model: entry.model ?? entry.name,
    architecture,
    files,
    threads: entry.threads ?? defaults.localThreads,
    command: provider === 'pocketsphinx' ? (entry.command ?? 'pocketsphinx_continuous') : null,
    modelDirectory:
      provider === 'pocketsphinx'
        ? path.resolve(cwd, entry.model_directory ?? '/usr/share/pocketsphinx/model/en-us')
        : null,
  };
}

/** Turns the configured (or built-in) entries into definitions, reporting every problem. */
export function buildModelCatalog(
  entries: readonly ModelEntry[] | undefined,
  defaultModel: string | undefined,
  defaults: ModelDefaults,
  cwd: string,
  fileLabel: string,
  problems: string[],
  keepBuiltInEngines = true,
): { definitions: ModelDefinition[]; defaultModel: string | null } {
  const configured = entries !== undefined;
  const list =
    entries === undefined
      ? builtInModels
      : keepBuiltInEngines
        ? [...entries, ...builtInEnginesFor(entries)]
        : entries;
  const definitions: ModelDefinition[] = [];
  const seen = new Set<string>();
  list.forEach((entry, index) => {
    const label = configured ? `${fileLabel}: models[${index}]` : `built-in model ${entry.name}`;
    if (seen.has(entry.name)) problems.push(`${label}.name: '${entry.name}' is defined twice`);
    if (entry.name === 'auto') {
      problems.push(`${label}.name: 'auto' is reserved (a request's "model": "auto" is routed)`);
    }
    seen.add(entry.name);
    const definition = toDefinition(entry, defaults, cwd, problems, label);
    if (definition !== null) definitions.push(definition);
  });
  const byName = new Map(definitions.map((definition) => [definition.name, definition]));
  definitions.forEach((definition) => {
    definition.fallbacks.forEach((fallback, index) => {
      const target = byName.get(fallback);
      const label = `${fileLabel}: model '${definition.name}' fallbacks[${index}]`;
      if (fallback === definition.name)
        problems.push(`${label}: a model cannot fall back to itself`);
      else if (target === undefined)
        problems.push(`${label}: '${fallback}' is not a defined model`);
      else if (target.type !== definition.type) {
        problems.push(
          `${label}: '${fallback}' is a ${target.type} model, not a ${definition.type} model`,
        );
      }
    });
  });
  let chosen: string | null = defaultModel ?? null;
  if (chosen !== null) {
    const target = byName.get(chosen);
    if (target === undefined) {
      problems.push(`${fileLabel}: default_model: '${chosen}' is not a defined model`);
    } else if (target.type !== 'chat') {
      problems.push(
        `${fileLabel}: default_model: '${chosen}' is a ${target.type} model, not a chat model`,
      );
    }
  } else {
    chosen = configured
      ? (definitions.find((definition) => definition.type === 'chat')?.name ?? null)
      : defaultLocalModel.name;
  }
  return { definitions, defaultModel: chosen };
}

/** Normalises configured templates (variables as names or objects) into definitions. */
export function buildTemplates(
  entries: readonly TemplateEntry[] | undefined,
  fileLabel: string,
  problems: string[],
): TemplateDefinition[] {
  (entries ?? []).forEach((entry, index) => {
    try {
      Mustache.parse(entry.system_prompt);
    } catch (error) {
      const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
      problems.push(
        `${fileLabel}: templates[${index}].system_prompt: not a valid template (${reason})`,
      );
    }
  });
  return (entries ?? []).map((entry) => ({
    name: entry.name,
    displayName: entry.display_name,
    description: entry.description,
    systemPrompt: entry.system_prompt,
    variables: entry.variables.map((variable) =>
      typeof variable === 'string'
        ? { name: variable, required: false, description: '', default: null }
        : variable,
    ),
    exampleUsage: entry.example_usage,
  }));
}
