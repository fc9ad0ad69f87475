// The embedded model engine: GGUF files run in-process by node-llama-cpp. It knows, per local
// model, whether the file is there, being downloaded or failed to load, says how to fix it, loads
// models on first use, and fetches missing ones in the background when configured to.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { LRUCache } from 'lru-cache';
import type {
  ChatWrapper,
  GbnfJsonSchema,
  Llama,
  LlamaEmbeddingContext,
  LlamaGrammar,
} from 'node-llama-cpp';
import type { Logger } from 'pino';
import type { LocalModelDefinition } from '../../config/config.js';
import { UpstreamError, type ChatModel, type EmbeddingModel } from '../spec.js';
import { FairQueue } from './fair-queue.js';
import {
  LocalChatModel,
  LocalEmbeddingModel,
  type LoadedLocalModel,
  type LocalModelHandle,
} from './local-chat-model.js';
import {
  downloadModelFile,
  type DownloadProgress,
  type DownloadResult,
} from './model-downloader.js';

export interface LocalEngine {
  /** Why the model cannot be used now and how to change that; null when it can. */
  unavailability(definition: LocalModelDefinition): string | null;
  chatModel(definition: LocalModelDefinition): ChatModel;
  embeddingModel(definition: LocalModelDefinition): EmbeddingModel;
  /** Fetches missing models that have a `source`, in the background, logging progress. */
  startAutoPull(definitions: readonly LocalModelDefinition[]): void;
  close(): Promise<void>;
}

export interface LocalModelStats {
  running: number;
  waiting: number;
  /** Tokens generated since start, including generations stopped early. */
  generatedTokens: number;
  loaded: boolean;
}

export interface LocalEngineOptions {
  gpu: 'auto' | false;
  huggingFaceEndpoint: string;
  huggingFaceToken: () => string | undefined;
  logger: Logger;
}

type ModelState =
  | { kind: 'idle' }
  | { kind: 'downloading'; progress: DownloadProgress | null }
  | { kind: 'download_failed'; reason: string }
  | { kind: 'load_failed'; reason: string };

const mebibyte = 1024 * 1024;

function describeProgress(progress: DownloadProgress | null): string {
  if (progress === null) return 'starting';
  const received = `${(progress.receivedBytes / mebibyte).toFixed(0)} MiB`;
  if (progress.totalBytes === null || progress.totalBytes === 0) return received;
  const percent = Math.floor((progress.receivedBytes / progress.totalBytes) * 100);
  return `${percent}% (${received} of ${(progress.totalBytes / mebibyte).toFixed(0)} MiB)`;
}

/**
 * `text` as clients may see it: the model file's directory shown relative to the working directory
 * (`data/models`), or as `<models directory>` when it lies elsewhere. The server's own layout stays
 * in its log. Paths of the partial and lock files start with the same directory, so they go too.
 */
function forClients(text: string, file: string): string {
  const directory = path.dirname(file);
  const relative = path.relative(process.cwd(), directory);
  const shown =
    relative === ''
      ? '.'
      : relative.startsWith('..') || path.isAbsolute(relative)
        ? '<models directory>'
        : relative;
  return text.replaceAll(directory, shown);
}

function howToGet(definition: LocalModelDefinition): string {
  const pull =
    definition.source === null
      ? ''
      : `Run 'npm run models -- pull ${definition.name}' (it downloads ${definition.source}), or `;
  return `${pull}${pull === '' ? 'Place' : 'place'} the GGUF file at ${definition.file}, or configure another model (see docs/models.md).`;
}

/**
 * Whether the model's chat template has a syntax for function calls. Every node-llama-cpp chat
 * wrapper can render calls, but those without one of their own fall back to a generic
 * `||call: name(…)` text the model was never trained on: those do not count.
 */
async function callsFunctions(wrapper: ChatWrapper): Promise<boolean> {
  const { ChatWrapper: BaseWrapper, JinjaTemplateChatWrapper } = await import('node-llama-cpp');
  if (wrapper instanceof JinjaTemplateChatWrapper) return wrapper.usingJinjaFunctionCallTemplate;
  return wrapper.settings.functions !== BaseWrapper.defaultSettings.functions;
}

class LocalModel implements LocalModelHandle {
  readonly queue: FairQueue;
  readonly embeddingQueue: FairQueue;
  state: ModelState = { kind: 'idle' };
  private loaded: Promise<LoadedLocalModel> | undefined;
  private embeddings: Promise<LlamaEmbeddingContext> | undefined;
  private present = false;
  generatedTokens = 0;

  get isLoaded(): boolean {
    return this.loaded !== undefined;
  }

  recordGenerated(tokens: number): void {
    this.generatedTokens += tokens;
  }

  /**
   * Grammars by schema text. Clients send schemas of their own (tools, response_format), so the
   * cache is bounded; a grammar compiled again costs milliseconds.
   */
  private readonly grammars = new LRUCache<string, Promise<LlamaGrammar>>({ max: 64 });
  private json: Promise<LlamaGrammar> | undefined;

  grammarFor(schema: GbnfJsonSchema): Promise<LlamaGrammar> {
    const key = JSON.stringify(schema);
    let grammar = this.grammars.get(key);
    if (grammar === undefined) {
      grammar = this.llama().then((llama) => {
        // The method's generic signature is inferred from literal schemas; ours arrive at run time.
        const create = llama.createGrammarForJsonSchema.bind(llama) as (
          schema: GbnfJsonSchema,
        ) => Promise<LlamaGrammar>;
        return create(schema);
      });
      // A schema the grammar generator chokes on is not kept: the next request tries again.
      grammar.catch(() => this.grammars.delete(key));
      this.grammars.set(key, grammar);
    }
    return grammar;
  }

  jsonGrammar(): Promise<LlamaGrammar> {
    this.json ??= this.llama().then((llama) => llama.getGrammarFor('json'));
    return this.json;
  }

  constructor(
    readonly definition: LocalModelDefinition,
    private readonly llama: () => Promise<Llama>,
  ) {
    const label = `Local model '${definition.name}'`;
    this.queue = new FairQueue(definition.parallel, definition.queueSize, label);
    this.embeddingQueue = new FairQueue(1, definition.queueSize, `${label} (embeddings)`);
  }

  /** Whether the file exists; once seen it is assumed to stay (deleting it is a restart's job). */
  fileExists(): boolean {
    if (!this.present) this.present = existsSync(this.definition.file);
    return this.present;
  }

  load(): Promise<LoadedLocalModel> {
    this.loaded ??= this.loadModel().catch((error: unknown) => {
      this.loaded = undefined;
      throw error;
    });
    return this.loaded;
  }

  loadEmbeddings(): Promise<LlamaEmbeddingContext> {
    this.embeddings ??= this.load().then(({ model }) =>
      model.createEmbeddingContext({
        contextSize: Math.min(this.definition.contextLength, model.trainContextSize),
        threads: this.definition.threads,
      }),
    );
    return this.embeddings;
  }

  private async loadModel(): Promise<LoadedLocalModel> {
    const { definition } = this;
    try {
      const llama = await this.llama();
      const model = await llama.loadModel({ modelPath: definition.file });
      const context = await model.createContext({
        contextSize: Math.min(definition.contextLength, model.trainContextSize),
        sequences: definition.parallel,
        threads: definition.threads,
      });
      const { resolveChatWrapper } = await import('node-llama-cpp');
      // Resolved once: for a Jinja template it renders the template several times over.
      const chatWrapper = resolveChatWrapper(model);
      return { model, context, chatWrapper, callsFunctions: await callsFunctions(chatWrapper) };
    } catch (error) {
      const detail = error instanceof Error ? error.message.split('\n')[0] : String(error);
      this.state = {
        kind: 'load_failed',
        reason: forClients(
          `The file ${definition.file} could not be loaded (${detail}). It may be incomplete or not a GGUF model; delete it and run 'npm run models -- pull ${definition.name}'.`,
          definition.file,
        ),
      };
      throw new UpstreamError(
        'model_unavailable',
        `Model '${definition.name}' is not available: ${this.state.reason}`,
        {
          cause: error,
        },
      );
    }
  }

  async dispose(): Promise<void> {
    const embeddings = await this.embeddings?.catch(() => undefined);
    await embeddings?.dispose();
    const loaded = await this.loaded?.catch(() => undefined);
    await loaded?.context.dispose();
    await loaded?.model.dispose();
  }
}

export class NodeLlamaEngine implements LocalEngine {
  private llamaInstance: Promise<Llama> | undefined;
  private readonly models = new Map<string, LocalModel>();
  private readonly downloads = new AbortController();

  constructor(private readonly options: LocalEngineOptions) {}

  unavailability(definition: LocalModelDefinition): string | null {
    const model = this.modelFor(definition);
    const { state } = model;
    if (state.kind === 'load_failed') return state.reason;
    if (model.fileExists()) return null;
    switch (state.kind) {
      case 'downloading':
        return `The model file is being downloaded: ${describeProgress(state.progress)}. Retry when it has finished (GET /v1/models shows the progress).`;
      case 'download_failed':
        return `The model file is missing and its automatic download failed: ${state.reason} When the network allows, run 'npm run models -- pull ${definition.name}'.`;
      case 'idle':
        return forClients(
          `The model file ${definition.file} is missing. ${howToGet(definition)}`,
          definition.file,
        );
    }
  }

  chatModel(definition: LocalModelDefinition): ChatModel {
    return new LocalChatModel(this.modelFor(definition));
  }

  stats(definition: LocalModelDefinition): LocalModelStats {
    const model = this.modelFor(definition);
    return { ...model.queue.size, generatedTokens: model.generatedTokens, loaded: model.isLoaded };
  }

  embeddingModel(definition: LocalModelDefinition): EmbeddingModel {
    return new LocalEmbeddingModel(this.modelFor(definition));
  }

  startAutoPull(definitions: readonly LocalModelDefinition[]): void {
    for (const definition of definitions) {
      const model = this.modelFor(definition);
      if (definition.source === null || model.fileExists() || model.state.kind !== 'idle') continue;
      void this.pull(definition).catch(() => undefined);
    }
  }

  /** Downloads a model's file (resuming a partial one), logging progress every 10%. */
  async pull(
    definition: LocalModelDefinition,
    onProgress?: (progress: DownloadProgress) => void,
  ): Promise<DownloadResult> {
    const model = this.modelFor(definition);
    if (definition.source === null) {
      throw new Error(`Model '${definition.name}' has no 'source' to download it from.`);
    }
    const { logger } = this.options;
    model.state = { kind: 'downloading', progress: null };
    let loggedDecile = -1;
    logger.info({ model: definition.name, source: definition.source }, 'downloading local model');
    try {
      const token = this.options.huggingFaceToken();
      const result = await downloadModelFile({
        source: definition.source,
        destination: definition.file,
        endpoint: this.options.huggingFaceEndpoint,
        signal: this.downloads.signal,
        ...(definition.sha256 === null ? {} : { sha256: definition.sha256 }),
        ...(token === undefined ? {} : { token }),
        onProgress: (progress) => {
          model.state = { kind: 'downloading', progress };
          onProgress?.(progress);
          if (progress.totalBytes !== null && progress.totalBytes > 0) {
            const decile = Math.floor((progress.receivedBytes / progress.totalBytes) * 10);
            if (decile > loggedDecile) {
              loggedDecile = decile;
              logger.info({ model: definition.name }, `downloading: ${describeProgress(progress)}`);
            }
          }
        },
      });
      model.state = { kind: 'idle' };
      logger.info(
        {
          model: definition.name,
          file: result.path,
          sha256: result.sha256,
          verified: result.checksumSource,
        },
        'local model downloaded',
      );
      return result;
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      model.state = { kind: 'download_failed', reason: forClients(reason, definition.file) };
      logger.warn({ model: definition.name, reason }, 'local model download failed');
      throw error;
    }
  }

  async close(): Promise<void> {
    this.downloads.abort();
    for (const model of this.models.values()) await model.dispose();
    const llama = await this.llamaInstance?.catch(() => undefined);
    await llama?.dispose();
  }

  private modelFor(definition: LocalModelDefinition): LocalModel {
    let model = this.models.get(definition.name);
    if (model === undefined) {
      model = new LocalModel(definition, () => this.llama());
      this.models.set(definition.name, model);
    }
    return model;
  }

  /** The native library, loaded on first use; never built from source (that needs the network). */
  private llama(): Promise<Llama> {
    this.llamaInstance ??= import('node-llama-cpp').then(({ getLlama, LlamaLogLevel }) =>
      getLlama({
        gpu: this.options.gpu,
        build: 'never',
        logLevel: LlamaLogLevel.error,
        logger: (level, message) => this.options.logger.debug({ level }, message.trim()),
      }),
    );
    return this.llamaInstance;
  }
}
