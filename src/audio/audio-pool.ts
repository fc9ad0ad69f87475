// The audio worker threads (Piscina): decoding, resampling, encoding and eSpeak NG synthesis run
// there so that no request blocks the event loop; a bounded queue refuses work past its size.
import path from 'node:path';
import type { Piscina } from 'piscina';
import { AppError } from '../errors/app-error.js';
import { bundleDirectory, packageRoot } from '../runtime-paths.js';
import type {
  PrepareTask,
  PreparedAudio,
  RenderTask,
  SynthesizeTask,
  TaskResult,
} from './audio-worker.js';
import type { EspeakVoice } from './espeak.js';

/** The worker's module: the built `.js`, or under tsx and vitest a loader of the `.ts` source. */
function workerFile(): string {
  return bundleDirectory === null
    ? path.join(packageRoot, 'src', 'audio', 'audio-worker-dev.js')
    : path.join(bundleDirectory, 'audio', 'audio-worker.js');
}

export class AudioPool {
  private pool: Promise<Piscina> | undefined;

  constructor(private readonly options: { threads: number; maxQueue: number }) {}

  prepare(task: PrepareTask, signal?: AbortSignal): Promise<PreparedAudio> {
    return this.run<PreparedAudio>('prepare', task, signal);
  }

  render(task: RenderTask, signal?: AbortSignal): Promise<Uint8Array> {
    return this.run<Uint8Array>('render', task, signal);
  }

  synthesize(
    task: SynthesizeTask,
    signal?: AbortSignal,
  ): Promise<{ samples: Int16Array; sampleRate: number }> {
    return this.run('synthesize', task, signal);
  }

  espeakVoices(): Promise<EspeakVoice[]> {
    return this.run('voices', {});
  }

  espeakHasVoice(voice: string): Promise<boolean> {
    return this.run('hasVoice', { voice });
  }

  /**
   * Starts the threads and loads and warms up eSpeak NG in them (~0.8 s of CPU per thread), so
   * that the first syntheses run at full speed.
   */
  async warmUp(): Promise<void> {
    await Promise.all(
      Array.from({ length: this.options.threads }, () => this.run<void>('warmUp', {})),
    );
  }

  async close(): Promise<void> {
    const pool = this.pool;
    this.pool = undefined;
    await (await pool)?.destroy();
  }

  /** Loaded on first use: command-line tools that build the services never start threads. */
  private piscina(): Promise<Piscina> {
    this.pool ??= import('piscina').then(
      ({ Piscina: Pool }) =>
        new Pool({
          filename: workerFile(),
          minThreads: this.options.threads,
          maxThreads: this.options.threads,
          maxQueue: this.options.maxQueue,
          idleTimeout: 60_000,
        }),
    );
    return this.pool;
  }

  private async run<T>(name: string, task: object, signal?: AbortSignal): Promise<T> {
    let result: TaskResult<T>;
    try {
      result = (await (
        await this.piscina()
      ).run(task, {
        name,
        ...(signal === undefined ? {} : { signal }),
      })) as TaskResult<T>;
    } catch (error) {
      if (error instanceof Error && /queue is full/i.test(error.message)) {
        // Not a model's failure (no fallback would help): the caller retries in a moment.
        throw new AppError('model_unavailable', 'The audio workers are busy; retry in a moment.', {
          headers: { 'retry-after': '1' },
          cause: error,
        });
      }
      throw error;
    }
    if (result.ok) return result.value;
    if (result.kind === 'audio_format') {
      throw new AppError('invalid_parameter', result.message, { param: 'audio' });
    }
    if (result.kind === 'unknown_voice') {
      throw new AppError('invalid_parameter', result.message, { param: 'voice_id' });
    }
    throw new Error(`audio worker task '${name}' failed: ${result.message}`);
  }
}
