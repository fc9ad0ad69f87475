// The speech engines on this machine: whether each engine model can run here and why not (with
// the fix), and the shared audio worker threads they and the speech service use.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { AppConfig, EngineFile, EngineModelDefinition } from '../../config/config.js';
import {
  downloadModelFile,
  type DownloadProgress,
  type DownloadResult,
} from '../local/model-downloader.js';
import { AudioPool } from '../../audio/audio-pool.js';
import { EspeakNgModel } from './engines/espeak-ng-model.js';
import { PocketSphinxModel } from './engines/pocketsphinx-model.js';
import { loadSherpaOnnx, SherpaOnnxModel } from './engines/sherpa-onnx-model.js';
import type { SpeechModel, TranscriptionModel } from './speech-models.js';

const require = createRequire(import.meta.url);

/** A program found in `searchPath` (the PATH the configuration read), or at its absolute path. */
function findProgram(command: string, searchPath: readonly string[]): string | null {
  if (command.includes('/')) return existsSync(command) ? command : null;
  for (const directory of searchPath) {
    if (directory === '') continue;
    const candidate = path.join(directory, command);
    if (existsSync(candidate)) return candidate;
  }
  return null;
}

/** Paths as clients may see them: relative to the working directory when inside it. */
function shown(file: string): string {
  const relative = path.relative(process.cwd(), file);
  return relative.startsWith('..') || path.isAbsolute(relative) ? file : relative;
}

export interface SpeechEnginesOptions {
  workerThreads: number;
  engineTimeoutMs: number;
  /** PocketSphinx processes per model at once. */
  transcriptionProcesses?: number;
  /** Directories searched for system programs (PocketSphinx). */
  programSearchPath: readonly string[];
  /** Where `hf:` model files come from (HF_ENDPOINT) and the token for gated ones. */
  huggingFaceEndpoint?: string;
  huggingFaceToken?: () => string | undefined;
}

export class SpeechEngines {
  readonly pool: AudioPool;
  private readonly pocketsphinxModels = new Set<PocketSphinxModel>();
  /** Checks that look at the system are done once; a restart sees an installation. */
  private readonly presence = new Map<string, string | null>();

  constructor(private readonly options: SpeechEnginesOptions) {
    this.pool = new AudioPool({ threads: options.workerThreads, maxQueue: 256 });
  }

  /** The engines as the configuration sets them up (`workerThreads` overrides its count). */
  static fromConfig(config: AppConfig, workerThreads = config.speech.workerThreads): SpeechEngines {
    return new SpeechEngines({
      workerThreads,
      engineTimeoutMs: config.speech.engineTimeoutMs,
      transcriptionProcesses: config.speech.transcriptionProcesses,
      programSearchPath: config.speech.programSearchPath,
      huggingFaceEndpoint: config.models.huggingFaceEndpoint,
      huggingFaceToken: () => config.secrets.get('HF_TOKEN'),
    });
  }

  unavailability(definition: EngineModelDefinition): string | null {
    switch (definition.provider) {
      case 'espeak-ng':
        return this.once('espeak-ng', () => {
          try {
            require.resolve('@echogarden/espeak-ng-emscripten');
            return null;
          } catch {
            return "The package @echogarden/espeak-ng-emscripten is not installed; run 'npm ci'.";
          }
        });
      case 'pocketsphinx': {
        const command = definition.command ?? 'pocketsphinx_continuous';
        const directory = definition.modelDirectory ?? '/usr/share/pocketsphinx/model/en-us';
        return this.once(`pocketsphinx:${command}:${directory}`, () => {
          if (findProgram(command, this.options.programSearchPath) === null) {
            return `The program '${command}' is not installed. On Debian or Ubuntu: 'sudo apt-get install pocketsphinx pocketsphinx-en-us', then restart the service.`;
          }
          if (!existsSync(path.join(directory, 'en-us.lm.bin'))) {
            return `PocketSphinx's US English model is missing from ${directory}. On Debian or Ubuntu: 'sudo apt-get install pocketsphinx-en-us' (or set model_directory), then restart the service.`;
          }
          return null;
        });
      }
      case 'sherpa-onnx': {
        const loaded = this.once('sherpa-onnx', () => {
          const addon = loadSherpaOnnx();
          return 'error' in addon ? addon.error : null;
        });
        if (loaded !== null) return loaded;
        const missing = definition.files.filter((file) => !existsSync(file.file));
        if (missing.length === 0) return null;
        const pullable = missing.every((file) => file.source !== null);
        return `The model files ${missing.map((file) => shown(file.file)).join(', ')} are missing. ${
          pullable
            ? `Run 'npm run models -- pull ${definition.name}' to download them`
            : 'Place them there'
        }, or configure another transcription model (see docs/speech-and-voice.md).`;
      }
    }
  }

  transcriptionModel(definition: EngineModelDefinition): TranscriptionModel {
    switch (definition.provider) {
      case 'pocketsphinx': {
        const model = new PocketSphinxModel(
          definition,
          this.options.engineTimeoutMs,
          this.options.transcriptionProcesses,
        );
        this.pocketsphinxModels.add(model);
        return model;
      }
      case 'sherpa-onnx':
        return new SherpaOnnxModel(definition);
      case 'espeak-ng':
        throw new Error(`model '${definition.name}' (espeak-ng) is not a transcription model`);
    }
  }

  speechModel(definition: EngineModelDefinition): SpeechModel {
    if (definition.provider !== 'espeak-ng') {
      throw new Error(`model '${definition.name}' (${definition.provider}) is not a speech model`);
    }
    return new EspeakNgModel(definition, this.pool);
  }

  /**
   * Downloads the files of a sherpa-onnx model that are missing (resuming partial ones, verified
   * by sha256), with the chat models' downloader; `onFile` gives a progress callback per file.
   */
  async pull(
    definition: EngineModelDefinition,
    onFile: (file: EngineFile) => (progress: DownloadProgress) => void,
    signal?: AbortSignal,
  ): Promise<DownloadResult[]> {
    const results: DownloadResult[] = [];
    for (const file of definition.files) {
      if (file.source === null || existsSync(file.file)) continue;
      const token = this.options.huggingFaceToken?.();
      results.push(
        await downloadModelFile({
          source: file.source,
          destination: file.file,
          ...(this.options.huggingFaceEndpoint === undefined
            ? {}
            : { endpoint: this.options.huggingFaceEndpoint }),
          ...(file.sha256 === null ? {} : { sha256: file.sha256 }),
          ...(token === undefined ? {} : { token }),
          ...(signal === undefined ? {} : { signal }),
          onProgress: onFile(file),
        }),
      );
    }
    // The files are there now: availability is looked at again.
    this.presence.clear();
    return results;
  }

  async close(): Promise<void> {
    for (const model of this.pocketsphinxModels) model.close();
    await this.pool.close();
  }

  private once(key: string, check: () => string | null): string | null {
    if (!this.presence.has(key)) this.presence.set(key, check());
    return this.presence.get(key) ?? null;
  }
}
