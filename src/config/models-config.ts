// The model catalog: the config file's `models` (else the built-in ones), the default model, where
// local models live and how they are fetched and run, and the cross-checks (names unique, default
// and fallbacks defined) that need the whole list.
import { availableParallelism } from 'node:os';
import path from 'node:path';
import Type, { type Static, type TObject } from 'typebox';
import type { ModelDefinition } from './config.js';
import {
  HttpUrl,
  NonEmptyString,
  OptionalInteger,
  type EnvReader,
  type Problems,
} from './config-kit.js';
import { builtInEnginesFor, builtInModels, defaultLocalModel } from './built-in-models.js';
import { toDefinition, type ModelDefaults } from './model-definitions.js';
import { ModelEntrySchema, type ModelEntry } from './model-entry.js';

/** The file's `models`: the catalog, replacing the built-in one. */
export const ModelListSchema = Type.Array(ModelEntrySchema, { maxItems: 500 });

/** The catalog's top-level keys of the file (`models` is checked on its own, as a section). */
export const modelsFileProperties = {
  default_model: Type.Optional(NonEmptyString()),
  models_dir: Type.Optional(NonEmptyString()),
  model_auto_pull: Type.Optional(Type.Boolean()),
  hf_endpoint: Type.Optional(HttpUrl()),
  local_model_threads: OptionalInteger(1, 256),
  local_model_gpu: Type.Optional(Type.Union([Type.Literal('auto'), Type.Literal(false)])),
  model_timeout_ms: OptionalInteger(100, 3_600_000),
  model_idle_timeout_ms: OptionalInteger(100, 3_600_000),
  model_max_retries: OptionalInteger(0, 10),
  /** Upstream calls one request may make across deployments, fallbacks and retries (default 4). */
  model_max_attempts: OptionalInteger(1, 20),
  /** A failing deployment's first cooldown (default 5 s), doubled on each failure in a row. */
  deployment_cooldown_ms: OptionalInteger(100, 3_600_000),
  /** The longest cooldown (default 5 min); a longer Retry-After is honoured, up to an hour. */
  deployment_max_cooldown_ms: OptionalInteger(100, 3_600_000),
};

type ModelsFile = Static<TObject<typeof modelsFileProperties>> & {
  models?: Static<typeof ModelListSchema>;
};
type ModelsEnv = Omit<
  ModelsFile,
  | 'default_model'
  | 'models'
  | 'model_max_retries'
  | 'model_max_attempts'
  | 'deployment_cooldown_ms'
  | 'deployment_max_cooldown_ms'
>;

export function readModelsEnv(env: EnvReader): ModelsEnv {
  const gpu = env.oneOf('LOCAL_MODEL_GPU', ['auto', 'false']);
  return {
    models_dir: env.text('MODELS_DIR'),
    model_auto_pull: env.boolean('MODEL_AUTO_PULL'),
    hf_endpoint: env.url('HF_ENDPOINT'),
    local_model_threads: env.integer('LOCAL_MODEL_THREADS', 1, 256),
    local_model_gpu: gpu === undefined ? undefined : gpu === 'auto' ? 'auto' : false,
    model_timeout_ms: env.integer('MODEL_TIMEOUT_MS', 100, 3_600_000),
    model_idle_timeout_ms: env.integer('MODEL_IDLE_TIMEOUT_MS', 100, 3_600_000),
  };
}

/** The catalog and how models run: the environment's settings, else the file's, else defaults. */
export function modelsConfig(
  fromEnv: ModelsEnv,
  file: ModelsFile,
  options: { keepBuiltInEngines: boolean; cwd: string; label: string; problems: Problems },
) {
  const { cwd } = options;
  const modelsDirectory = path.resolve(
    cwd,
    fromEnv.models_dir ?? file.models_dir ?? './data/models',
  );
  const cores = availableParallelism();
  const defaults: ModelDefaults = {
    modelsDirectory,
    // More threads than cores only adds contention; on two cores one thread leaves the other
    // to the HTTP server.
    localThreads:
      fromEnv.local_model_threads ?? file.local_model_threads ?? (cores <= 2 ? 1 : cores),
    timeoutMs: fromEnv.model_timeout_ms ?? file.model_timeout_ms ?? 60_000,
    idleTimeoutMs: fromEnv.model_idle_timeout_ms ?? file.model_idle_timeout_ms ?? 20_000,
    maxRetries: file.model_max_retries ?? 2,
    maxAttempts: file.model_max_attempts ?? 4,
  };
  const catalog = buildModelCatalog(file.models, file.default_model, { ...options, defaults });
  return {
    definitions: catalog.definitions,
    defaultModel: catalog.defaultModel,
    modelsDirectory,
    autoPull: fromEnv.model_auto_pull ?? file.model_auto_pull ?? true,
    huggingFaceEndpoint: fromEnv.hf_endpoint ?? file.hf_endpoint ?? 'https://huggingface.co',
    localGpu: fromEnv.local_model_gpu ?? file.local_model_gpu ?? false,
    upstreams: {
      cooldownMs: file.deployment_cooldown_ms ?? 5000,
      maxCooldownMs: Math.max(
        file.deployment_max_cooldown_ms ?? 300_000,
        file.deployment_cooldown_ms ?? 5000,
      ),
    },
  };
}

interface CatalogOptions {
  defaults: ModelDefaults;
  keepBuiltInEngines: boolean;
  cwd: string;
  /** The config file's path, or `config`. */
  label: string;
  problems: Problems;
}

/** Turns the configured (or built-in) entries into definitions, reporting every problem. */
export function buildModelCatalog(
  entries: readonly ModelEntry[] | undefined,
  defaultModel: string | undefined,
  options: CatalogOptions,
): { definitions: ModelDefinition[]; defaultModel: string | null } {
  const { label: fileLabel, problems } = options;
  const configured = entries !== undefined;
  const list =
    entries === undefined
      ? builtInModels
      : options.keepBuiltInEngines
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
    const definition = toDefinition(entry, { ...options, label });
    if (definition !== null) definitions.push(definition);
  });
  const byName = new Map(definitions.map((definition) => [definition.name, definition]));
  checkFallbacks(definitions, byName, fileLabel, problems);
  checkAliases(definitions, byName, fileLabel, problems);
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

function checkFallbacks(
  definitions: readonly ModelDefinition[],
  byName: ReadonlyMap<string, ModelDefinition>,
  fileLabel: string,
  problems: Problems,
): void {
  for (const definition of definitions) {
    definition.fallbacks.forEach((fallback, index) => {
      const target = byName.get(fallback);
      const label = `${fileLabel}: model '${definition.name}' fallbacks[${index}]`;
      if (fallback === definition.name) {
        problems.push(`${label}: a model cannot fall back to itself`);
      } else if (target === undefined) {
        problems.push(`${label}: '${fallback}' is not a defined model`);
      } else if (target.type !== definition.type) {
        problems.push(
          `${label}: '${fallback}' is a ${target.type} model, not a ${definition.type} model`,
        );
      }
    });
  }
}

/** An alias names one model: no model's name, no other model's alias. */
function checkAliases(
  definitions: readonly ModelDefinition[],
  byName: ReadonlyMap<string, ModelDefinition>,
  fileLabel: string,
  problems: Problems,
): void {
  const owners = new Map<string, string>();
  for (const definition of definitions) {
    for (const alias of definition.speech?.aliases ?? []) {
      const label = `${fileLabel}: model '${definition.name}' aliases`;
      const owner = owners.get(alias);
      if (byName.has(alias)) problems.push(`${label}: '${alias}' is the name of a model`);
      else if (owner !== undefined) {
        problems.push(`${label}: '${alias}' is already an alias of '${owner}'`);
      }
      owners.set(alias, definition.name);
    }
  }
}
