// The config file (`PLATFORM_CONFIG`, YAML or JSON): its schema, composed of every piece's part,
// and its reading. Every problem of a file is reported; a file with any is then ignored.
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type * as Yaml from 'yaml';
import path from 'node:path';
import Type, { type Static, type TOptional, type TSchema, type TUnknown } from 'typebox';
import { RateLimitsFileSchema, SessionsFileSchema } from '../modules/accounts/accounts.config.js';
import { WebFileSchema } from '../modules/agents/agents.config.js';
import { ChatFileSchema } from '../modules/chat/chat.config.js';
import { featuresFileSchema } from '../modules/health/health.config.js';
import { featureNames } from '../modules/health/feature-catalog.js';
import { KnowledgeFileSchema } from '../modules/knowledge/knowledge.config.js';
import { RoutingFileSchema } from '../modules/routing/routing.config.js';
import { TemplatesFileSchema } from '../modules/templates/templates.config.js';
import { ToolsFileSchema } from '../modules/tools/tools.config.js';
import { UsageFileSchema } from '../modules/usage/usage.config.js';
import { AuditFileSchema } from '../modules/audit/audit.config.js';
import { AuthFileSchema } from '../modules/accounts/sso/sso.config.js';
import { CacheFileSchema } from './cache-config.js';
import { SpeechFileSchema } from '../modules/voice/voice.config.js';
import { checkAgainst, Closed, inFile, type Problems } from './config-kit.js';
import { databaseFileProperties } from './database-config.js';
import { loggingFileProperties } from './logging-config.js';
import { ModelListSchema, modelsFileProperties } from './models-config.js';
import { redisFileProperties } from './redis-config.js';
import { secretsFileProperties } from './secrets-config.js';
import { checkServerLists, serverFileProperties } from './server-config.js';
import { TextFileSchema } from './text-config.js';

/** The YAML parser, loaded for a YAML file only (~9 MiB a JSON file or none never needs). */
const parseYaml = (text: string): unknown =>
  (createRequire(import.meta.url)('yaml') as typeof Yaml).parse(text);

/** The top-level settings of the file, each piece's (small: checked as a whole). */
const topLevelProperties = {
  ...serverFileProperties,
  ...loggingFileProperties,
  ...databaseFileProperties,
  ...redisFileProperties,
  ...secretsFileProperties,
  ...modelsFileProperties,
};

/**
 * The file's sections, each checked by its own validator, built when a file first has it: a
 * validator is generated code that takes a while to build (the model catalog's most), and a file
 * holds a few sections.
 */
const sections = {
  models: ModelListSchema,
  rate_limits: RateLimitsFileSchema,
  sessions: SessionsFileSchema,
  features: featuresFileSchema(featureNames),
  templates: TemplatesFileSchema,
  web: WebFileSchema,
  tools: ToolsFileSchema,
  usage: UsageFileSchema,
  audit: AuditFileSchema,
  auth: AuthFileSchema,
  cache: CacheFileSchema,
  routing: RoutingFileSchema,
  speech: SpeechFileSchema,
  knowledge: KnowledgeFileSchema,
  chat: ChatFileSchema,
  text: TextFileSchema,
};

type Sections = typeof sections;

/** The whole file's schema (its type; the file is checked by `TopLevelSchema` and each section). */
export const ConfigFileSchema = Closed({
  ...topLevelProperties,
  ...(Object.fromEntries(
    Object.entries(sections).map(([key, schema]) => [key, Type.Optional(schema)]),
  ) as { [Key in keyof Sections]: TOptional<Sections[Key]> }),
});

/** The config file's settings (every key optional), as the file and the overrides give them. */
export type ConfigFile = Static<typeof ConfigFileSchema>;

const TopLevelSchema = Closed({
  ...topLevelProperties,
  ...(Object.fromEntries(
    Object.keys(sections).map((key) => [key, Type.Optional(Type.Unknown())]),
  ) as Record<keyof Sections, TOptional<TUnknown>>),
});

/** Checks a file's (or the overrides') settings, reporting every problem; true when all hold. */
function checkSettings(
  data: unknown,
  where: (path: string) => string,
  problems: Problems,
): data is ConfigFile {
  let valid = checkAgainst(TopLevelSchema, data, where, problems);
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return false;
  const given = new Map<string, unknown>(Object.entries(data));
  for (const [key, schema] of Object.entries(sections) as [string, TSchema][]) {
    const value = given.get(key);
    if (value === undefined) continue;
    const inSection = (path: string) => where(path === '' ? key : `${key}.${path}`);
    if (!checkAgainst(schema, value, inSection, problems)) valid = false;
  }
  checkServerLists(data, where, problems);
  return valid;
}

function parseConfigFile(filePath: string, problems: Problems): unknown {
  if (!existsSync(filePath)) {
    problems.push(`PLATFORM_CONFIG: file '${filePath}' does not exist`);
    return undefined;
  }
  const text = readFileSync(filePath, 'utf8');
  try {
    const data: unknown = filePath.endsWith('.json') ? JSON.parse(text) : parseYaml(text);
    return data ?? {};
  } catch (error) {
    const reason = error instanceof Error ? error.message.split('\n')[0] : 'cannot be parsed';
    problems.push(
      `${filePath}: not valid ${filePath.endsWith('.json') ? 'JSON' : 'YAML'} (${reason})`,
    );
    return undefined;
  }
}

/**
 * The settings of the file `PLATFORM_CONFIG` names (relative to `cwd`) with `overrides` over them
 * (tests and benchmarks; the same schema); `label` is the file's path, null without a file.
 */
export function readSettings(
  configPath: string | undefined,
  overrides: unknown,
  cwd: string,
  problems: Problems,
): { file: ConfigFile; label: string | null } {
  let label: string | null = null;
  let file: ConfigFile = {};
  if (configPath !== undefined && configPath !== '') {
    const resolved = path.resolve(cwd, configPath);
    const data = parseConfigFile(resolved, problems);
    if (data !== undefined) {
      label = resolved;
      if (checkSettings(data, inFile(resolved), problems)) file = data;
    }
  }
  if (overrides !== undefined) {
    const where = (at: string) => `overrides: ${at === '' ? '(top level)' : at}`;
    if (checkSettings(overrides, where, problems)) file = { ...file, ...overrides };
  }
  return { file, label };
}
