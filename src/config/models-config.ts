// The model catalog and prompt templates of the configuration: file schema, built-in defaults,
// and the cross-checks (names unique, default and fallbacks defined) that need the whole list.
import path from 'node:path';
import Mustache from 'mustache';
import { z } from 'zod';
import type {
  LocalModelDefinition,
  ModelDefinition,
  ModelProvider,
  TemplateDefinition,
} from './config.js';

export const modelProviders = [
  'openai',
  'anthropic',
  'google',
  'openai-compatible',
  'local',
] as const;

const modelName = z
  .string()
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$/,
    'letters, digits and . _ : / - only, at most 128 characters',
  );

const environmentVariableName = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'the name of an environment variable');

export const modelEntrySchema = z.strictObject({
  name: modelName,
  display_name: z.string().min(1).max(200).optional(),
  provider: z.enum(modelProviders),
  /** The provider's own model id (for `local`: a label; the file is `file` or `source`). */
  model: z.string().min(1).max(256).optional(),
  type: z.enum(['chat', 'embedding']).optional(),
  base_url: z.url({ protocol: /^https?$/ }).optional(),
  api_key_env: environmentVariableName.optional(),
  max_tokens: z.int().min(1).max(1_000_000).optional(),
  context_length: z.int().min(16).max(10_000_000).optional(),
  fallbacks: z.array(modelName).max(10).optional(),
  timeout_ms: z.int().min(100).max(3_600_000).optional(),
  max_retries: z.int().min(0).max(10).optional(),
  /** openai-compatible: the server accepts `response_format: json_schema` (else JSON mode). */
  structured_outputs: z.boolean().optional(),
  // Local models only.
  source: z
    .string()
    .regex(/^(hf:[^/\s]+\/[^/\s]+\/\S+|https?:\/\/\S+)$/, "'hf:owner/repo/file.gguf' or a URL")
    .optional(),
  file: z.string().min(1).optional(),
  sha256: z
    .string()
    .regex(/^[0-9a-f]{64}$/, '64 lower-case hex digits')
    .optional(),
  threads: z.int().min(1).max(256).optional(),
  parallel: z.int().min(1).max(64).optional(),
  queue_size: z.int().min(0).max(10_000).optional(),
});

export type ModelEntry = z.infer<typeof modelEntrySchema>;

export const templateEntrySchema = z.strictObject({
  name: z.string().regex(/^[a-z0-9_]{1,64}$/, 'lower-case letters, digits and _ only'),
  display_name: z.string().min(1).max(200),
  description: z.string().max(2000).default(''),
  system_prompt: z.string().min(1).max(100_000),
  variables: z
    .array(
      z.union([
        z.string().regex(/^[a-z0-9_]{1,64}$/),
        z.strictObject({
          name: z.string().regex(/^[a-z0-9_]{1,64}$/),
          required: z.boolean().default(false),
          description: z.string().max(1000).default(''),
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
};

/** The default local model: small, Apache-2.0, instruction-tuned, ~400 MB (see docs/decisions.md). */
export const defaultLocalModel: ModelEntry = {
  name: 'qwen2.5-0.5b-instruct',
  display_name: 'Qwen2.5 0.5B Instruct (local, Q4_K_M)',
  provider: 'local',
  model: 'Qwen/Qwen2.5-0.5B-Instruct-GGUF',
  source: 'hf:Qwen/Qwen2.5-0.5B-Instruct-GGUF/qwen2.5-0.5b-instruct-q4_k_m.gguf',
  max_tokens: 1024,
  context_length: 4096,
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
  },
  {
    name: 'claude-3-5-haiku',
    display_name: 'Claude 3.5 Haiku',
    provider: 'anthropic',
    model: 'claude-3-5-haiku-latest',
    max_tokens: 8192,
    context_length: 200_000,
  },
  {
    name: 'gemini-2.0-flash',
    display_name: 'Gemini 2.0 Flash',
    provider: 'google',
    model: 'gemini-2.0-flash',
    max_tokens: 8192,
    context_length: 1_048_576,
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
];

export interface ModelDefaults {
  modelsDirectory: string;
  localThreads: number;
  timeoutMs: number;
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
    type: entry.type ?? 'chat',
    maxTokens: entry.max_tokens ?? 1024,
    contextLength: entry.context_length ?? 8192,
    fallbacks: entry.fallbacks ?? [],
    timeoutMs: entry.timeout_ms ?? defaults.timeoutMs,
    maxRetries: entry.max_retries ?? defaults.maxRetries,
  };
  if (base.type === 'chat' && base.maxTokens >= base.contextLength) {
    problems.push(`${label}: max_tokens must be smaller than context_length`);
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

/** Turns the configured (or built-in) entries into definitions, reporting every problem. */
export function buildModelCatalog(
  entries: readonly ModelEntry[] | undefined,
  defaultModel: string | undefined,
  defaults: ModelDefaults,
  cwd: string,
  fileLabel: string,
  problems: string[],
): { definitions: ModelDefinition[]; defaultModel: string | null } {
  const configured = entries !== undefined;
  const list = entries ?? builtInModels;
  const definitions: ModelDefinition[] = [];
  const seen = new Set<string>();
  list.forEach((entry, index) => {
    const label = configured ? `${fileLabel}: models[${index}]` : `built-in model ${entry.name}`;
    if (seen.has(entry.name)) problems.push(`${label}.name: '${entry.name}' is defined twice`);
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
      problems.push(`${fileLabel}: default_model: '${chosen}' is an embedding model`);
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
        ? { name: variable, required: false, description: '' }
        : variable,
    ),
    exampleUsage: entry.example_usage,
  }));
}
