// The model registry as src/services.ts builds it, with a catalog of openai-compatible models
// served by the fake upstream (../fake-upstream.ts: real HTTP in OpenAI's wire format). Every
// model tries once (no retries), so a scripted failure is answered at once.
import type { Logger } from 'pino';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import type { AppConfig } from '../../../src/config/config.js';
import type { LoadConfigOptions } from '../../../src/config/load-config.js';
import { NodeLlamaEngine } from '../../../src/models/local/local-engine.js';
import { ModelRegistry } from '../../../src/models/model-registry.js';
import { SpeechEngines } from '../../../src/models/speech/speech-engines.js';
import { ConversationService } from '../../../src/modules/conversations/conversation-service.js';
import { ConversationsRepository } from '../../../src/modules/conversations/conversations.repository.js';
import { TemplateCatalog } from '../../../src/modules/templates/template-catalog.js';
import type { DialectUnderTest } from '../dialects.js';
import { startFakeUpstream, type FakeUpstream } from '../fake-upstream.js';
import type { TestClock } from './clock.js';
import { openUnitStorage, type UnitStorage } from './storage.js';

/** The key the models send upstream, and the variable the configuration reads it from. */
export const unitUpstreamKey = 'sk-unit-upstream-key-0123456789';
export const unitUpstreamEnv = { UNIT_UPSTREAM_KEY: unitUpstreamKey };

/**
 * - `unit-chat` (default): falls back to `unit-backup`; both take tools, images, JSON schemas and
 *   audio; the others text and tools only (an OpenAI-compatible server's default);
 * - `unit-backup`: the fallback (upstream model `gpt-4o`, so requests tell the two apart);
 * - `unit-alone`: no fallback;
 * - `unit-small`: a context of 120 tokens with max_tokens 20, for trimming.
 */
const everything = ['tools', 'vision', 'json_schema', 'audio_input'];

export function unitModelCatalog(baseUrl: string): NonNullable<LoadConfigOptions['overrides']> {
  const model = (name: string, upstreamModel: string, extra: Record<string, unknown> = {}) => ({
    name,
    provider: 'openai-compatible' as const,
    base_url: baseUrl,
    api_key_env: 'UNIT_UPSTREAM_KEY',
    model: upstreamModel,
    max_tokens: 256,
    context_length: 4096,
    max_retries: 0,
    timeout_ms: 5000,
    ...extra,
  });
  return {
    default_model: 'unit-chat',
    models: [
      model('unit-chat', 'gpt-4o-mini', { fallbacks: ['unit-backup'], capabilities: everything }),
      model('unit-backup', 'gpt-4o', { capabilities: everything }),
      model('unit-alone', 'gpt-4o-mini'),
      model('unit-small', 'gpt-4o-mini', { max_tokens: 20, context_length: 120 }),
    ],
    speech: { builtin_engines: false },
  };
}

export interface UnitModels {
  models: ModelRegistry;
  close(): Promise<void>;
}

/** The registry with its local engine and speech engines (both idle until a model needs them). */
export async function unitModelRegistry(config: AppConfig, logger: Logger): Promise<UnitModels> {
  const localEngine = new NodeLlamaEngine({
    gpu: config.models.localGpu,
    huggingFaceEndpoint: config.models.huggingFaceEndpoint,
    huggingFaceToken: () => config.secrets.get('HF_TOKEN'),
    logger,
  });
  const speechEngines = SpeechEngines.fromConfig(config);
  const models = new ModelRegistry(config, localEngine, logger, { speech: speechEngines });
  // The token tables, loaded once here rather than inside the first test that counts tokens.
  await models.warmUp();
  return {
    models,
    async close() {
      await localEngine.close();
      await speechEngines.close();
    },
  };
}

export interface ChatStack {
  unit: UnitStorage;
  models: ModelRegistry;
  conversations: ConversationService;
  close(): Promise<void>;
}

/** Storage of `dialect`, the registry over `upstream`'s models, and conversations, on `clock`. */
export async function openChatStack(
  dialect: DialectUnderTest,
  upstream: FakeUpstream,
  clock: TestClock,
): Promise<ChatStack> {
  const unit = await openUnitStorage(dialect, {
    env: unitUpstreamEnv,
    overrides: unitModelCatalog(upstream.baseUrl),
  });
  const registry = await unitModelRegistry(unit.config, unit.logger);
  const conversations = new ConversationService({
    conversations: new ConversationsRepository(unit.storage.db),
    models: registry.models,
    templates: new TemplateCatalog(unit.config.templates),
    now: clock.now,
  });
  return {
    unit,
    models: registry.models,
    conversations,
    async close() {
      await registry.close();
      await unit.close();
    },
  };
}

/** A fake upstream for the whole file, its script and records cleared before each test. */
export function fakeUpstreamForFile(): () => FakeUpstream {
  let upstream: FakeUpstream | undefined;
  beforeAll(async () => {
    upstream = await startFakeUpstream({ requireApiKey: unitUpstreamKey });
  });
  afterAll(() => upstream?.close());
  beforeEach(() => upstream?.reset());
  return () => {
    if (upstream === undefined) throw new Error('the fake upstream starts in beforeAll');
    return upstream;
  };
}
