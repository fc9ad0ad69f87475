// One model entry of the catalog turned into its definition: defaults filled in, each field
// checked against what the model's connection and kind take, every problem reported.
import path from 'node:path';
import type {
  ChatCapability,
  EngineModelDefinition,
  LocalModelDefinition,
  ModelDefinition,
  RemoteModelDefinition,
  SpeechEngineProvider,
  SpeechSettings,
} from './config.js';
import type { Problems } from './config-kit.js';
import {
  defaultApiKeyEnv,
  defaultCapabilities,
  isSpeechEngine,
  sherpaArchitectures,
  typesOfProvider,
  type ModelEntry,
  type SherpaArchitecture,
} from './model-entry.js';
import { makerOf } from './model-makers.js';
import { deploymentsOf } from './model-deployments.js';
import { pricingOf } from './model-pricing.js';

export interface ModelDefaults {
  modelsDirectory: string;
  localThreads: number;
  timeoutMs: number;
  idleTimeoutMs: number;
  maxRetries: number;
  maxAttempts: number;
}

/** Where an entry is defined and what it is built with. */
export interface EntrySite {
  /** `<file>: models[3]`, or `built-in model <name>`. */
  label: string;
  defaults: ModelDefaults;
  cwd: string;
  problems: Problems;
}

type DefinitionBase = Omit<
  EngineModelDefinition,
  'provider' | 'model' | 'architecture' | 'files' | 'threads' | 'command' | 'modelDirectory'
>;

function fileNameOf(source: string): string {
  const last = source.split('/').pop() ?? 'model.gguf';
  return last.split('?')[0] ?? 'model.gguf';
}

/** Reports each of `fields` the entry sets, as `<label>.<field>: <why(field)>`. */
function refuseFields(
  entry: ModelEntry,
  fields: readonly (keyof ModelEntry)[],
  why: (field: string) => string,
  site: EntrySite,
): void {
  for (const field of fields) {
    if (entry[field] !== undefined) site.problems.push(`${site.label}.${field}: ${why(field)}`);
  }
}

/** The definition of a configured (or built-in) entry; null when it cannot be built. */
export function toDefinition(entry: ModelEntry, site: EntrySite): ModelDefinition | null {
  const { label, problems } = site;
  const base = baseOf(entry, site);
  if (base.type === 'chat' && base.maxTokens >= base.contextLength) {
    problems.push(`${label}: max_tokens must be smaller than context_length`);
  }
  if (!typesOfProvider[entry.provider].includes(base.type)) {
    problems.push(
      `${label}.type: provider '${entry.provider}' serves ${typesOfProvider[entry.provider].join(', ')} models, not ${base.type}`,
    );
    return null;
  }
  if (entry.deployments !== undefined && (base.type !== 'chat' || entry.provider === 'local')) {
    problems.push(`${label}.deployments: only chat models of a remote provider take deployments`);
  }
  if (base.type === 'chat' || base.type === 'embedding') {
    if (base.type === 'embedding' && entry.cache !== undefined) {
      problems.push(`${label}.cache: only chat models' answers are cached`);
    }
    refuseFields(
      entry,
      ['voices', 'default_voice', 'languages', 'aliases'],
      (field) => `only transcription and speech models take '${field}'`,
      site,
    );
  }
  if (isSpeechEngine(entry.provider)) return engineDefinition(entry, entry.provider, base, site);
  refuseFields(
    entry,
    ['architecture', 'files', 'command', 'model_directory'],
    (field) => `only speech engines on this machine take '${field}'`,
    site,
  );
  return entry.provider === 'local'
    ? localDefinition(entry, base, site)
    : remoteDefinition(entry, base, site);
}

function baseOf(entry: ModelEntry, site: EntrySite): DefinitionBase {
  const { defaults } = site;
  const pricing = pricingOf(entry);
  const dollars = (micros: number | null | undefined) =>
    micros === null || micros === undefined ? null : micros / 1_000_000;
  return {
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
    maxAttempts: entry.max_attempts ?? defaults.maxAttempts,
    routing: {
      inputCostPerMillion: dollars(pricing?.inputPerMtok),
      outputCostPerMillion: dollars(pricing?.outputPerMtok),
      quality: entry.quality ?? null,
      typicalLatencyMs: entry.typical_latency_ms ?? null,
    },
    speech: speechSettingsOf(entry, site),
    capabilities: capabilitiesOf(entry),
    pricing,
    cache: entry.cache ?? null,
  };
}

/**
 * A chat model's capabilities: the entry's list, else its connection's defaults (an
 * openai-compatible entry with `structured_outputs: true` adds json_schema).
 */
function capabilitiesOf(entry: ModelEntry): readonly ChatCapability[] {
  if ((entry.type ?? 'chat') !== 'chat') return [];
  if (entry.capabilities !== undefined) return entry.capabilities;
  const defaults = defaultCapabilities[entry.provider];
  return entry.provider === 'openai-compatible' && entry.structured_outputs === true
    ? [...defaults, 'json_schema']
    : defaults;
}

function localDefinition(
  entry: ModelEntry,
  base: DefinitionBase,
  site: EntrySite,
): LocalModelDefinition | null {
  if (entry.file === undefined && entry.source === undefined) {
    site.problems.push(
      `${site.label}: a local model needs 'file' (a GGUF path) or 'source' (hf:… or URL)`,
    );
    return null;
  }
  refuseFields(
    entry,
    ['base_url', 'api_key_env', 'structured_outputs'],
    () => 'not used by local models',
    site,
  );
  return {
    ...base,
    provider: 'local',
    model: entry.model ?? entry.name,
    source: entry.source ?? null,
    file:
      entry.file !== undefined
        ? path.resolve(site.cwd, entry.file)
        : path.join(site.defaults.modelsDirectory, fileNameOf(entry.source ?? '')),
    sha256: entry.sha256 ?? null,
    threads: entry.threads ?? site.defaults.localThreads,
    parallel: entry.parallel ?? 1,
    queueSize: entry.queue_size ?? 32,
  };
}

function remoteDefinition(
  entry: ModelEntry,
  base: DefinitionBase,
  site: EntrySite,
): RemoteModelDefinition | null {
  const { label, problems } = site;
  refuseFields(
    entry,
    ['source', 'file', 'sha256', 'threads', 'parallel', 'queue_size'],
    (field) => `only local models take '${field}'`,
    site,
  );
  if (entry.model === undefined) {
    problems.push(`${label}.model: the provider's model id is required`);
    return null;
  }
  if (entry.provider === 'openai-compatible' && entry.base_url === undefined) {
    problems.push(`${label}.base_url: an openai-compatible model needs the server's base URL`);
    return null;
  }
  const provider = entry.provider as RemoteModelDefinition['provider'];
  const definition: RemoteModelDefinition = {
    ...base,
    provider,
    model: entry.model,
    baseUrl: entry.base_url ?? null,
    apiKeyEnv: entry.api_key_env ?? defaultApiKeyEnv[provider],
    structuredOutputs: entry.structured_outputs ?? provider !== 'openai-compatible',
    deployments: [],
  };
  if (entry.deployments === undefined || base.type !== 'chat') return definition;
  return {
    ...definition,
    deployments: deploymentsOf(entry, definition, site.label, site.problems),
  };
}

function speechSettingsOf(entry: ModelEntry, site: EntrySite): SpeechSettings | null {
  const { label, problems } = site;
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
    aliases: entry.aliases ?? [],
  };
}

/** A model served by espeak-ng, sherpa-onnx or pocketsphinx on this machine. */
function engineDefinition(
  entry: ModelEntry,
  provider: SpeechEngineProvider,
  base: DefinitionBase,
  site: EntrySite,
): EngineModelDefinition | null {
  refuseFields(
    entry,
    [
      'base_url',
      'api_key_env',
      'structured_outputs',
      'source',
      'file',
      'sha256',
      'parallel',
      'queue_size',
    ],
    () => `not used by ${provider} models`,
    site,
  );
  let sherpa: { architecture: SherpaArchitecture; files: EngineModelDefinition['files'] } | null =
    null;
  if (provider === 'sherpa-onnx') {
    sherpa = sherpaFiles(entry, site);
    if (sherpa === null) return null;
  } else {
    refuseFields(
      entry,
      ['architecture', 'files'],
      (field) => `only sherpa-onnx models take '${field}'`,
      site,
    );
  }
  if (provider !== 'pocketsphinx') {
    refuseFields(
      entry,
      ['command', 'model_directory'],
      (field) => `only pocketsphinx models take '${field}'`,
      site,
    );
  }
  return {
    ...base,
    provider,
    model: entry.model ?? entry.name,
    architecture: sherpa?.architecture ?? null,
    files: sherpa?.files ?? [],
    threads: entry.threads ?? site.defaults.localThreads,
    command: provider === 'pocketsphinx' ? (entry.command ?? 'pocketsphinx_continuous') : null,
    modelDirectory:
      provider === 'pocketsphinx'
        ? path.resolve(site.cwd, entry.model_directory ?? '/usr/share/pocketsphinx/model/en-us')
        : null,
  };
}

/** A sherpa-onnx model's family and the files it needs, each one checked. */
function sherpaFiles(
  entry: ModelEntry,
  site: EntrySite,
): { architecture: SherpaArchitecture; files: EngineModelDefinition['files'] } | null {
  const { label, problems } = site;
  const architecture = entry.architecture;
  if (architecture === undefined) {
    problems.push(
      `${label}.architecture: a sherpa-onnx model needs its family (${Object.keys(sherpaArchitectures).join(', ')})`,
    );
    return null;
  }
  const roles: readonly string[] = sherpaArchitectures[architecture];
  const given = new Map(Object.entries(entry.files ?? {}));
  const files: EngineModelDefinition['files'][number][] = [];
  for (const role of roles) {
    const spec = given.get(role);
    if (spec === undefined || (spec.file === undefined && spec.source === undefined)) {
      problems.push(
        `${label}.files.${role}: a ${architecture} model needs its ${role} file ('file' or 'source')`,
      );
      continue;
    }
    const directory = path.join(site.defaults.modelsDirectory, entry.name);
    files.push({
      role,
      source: spec.source ?? null,
      file:
        spec.file !== undefined
          ? path.resolve(site.cwd, spec.file)
          : path.join(directory, fileNameOf(spec.source ?? '')),
      sha256: spec.sha256 ?? null,
    });
  }
  for (const role of given.keys()) {
    if (!roles.includes(role)) {
      problems.push(`${label}.files.${role}: a ${architecture} model takes ${roles.join(', ')}`);
    }
  }
  return { architecture, files };
}
