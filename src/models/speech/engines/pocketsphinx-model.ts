// Transcription by the system's PocketSphinx (Debian's pocketsphinx and pocketsphinx-en-us): one
// pocketsphinx_continuous process per utterance, fed raw 16 kHz PCM through a named pipe while
// the user speaks, so that little is left to decode when they stop. A process is started ahead
// of need (it takes ~0.4 s of CPU to load its model); at most `maxProcesses` run at once, others
// wait their turn in a bounded queue; every process is bounded in time and output.
//
// The pipe is opened for writing only once the recogniser has opened it for reading (a
// non-blocking open fails until then): audio written and closed before the reader arrives would
// be discarded with the pipe, and the recogniser would then wait for a writer forever.
import { execFile } from 'node:child_process';
import { constants as fsConstants, open as openCallback } from 'node:fs';
import { mkdtemp, unlink } from 'node:fs/promises';
import { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import type { EngineModelDefinition } from '../../../config/config.js';
import { UpstreamError, RequestAbortedError } from '../../spec.js';
import type {
  Transcription,
  TranscriptionModel,
  TranscriptionRequest,
  TranscriptionStream,
} from '../speech-models.js';
import {
  sampleRate,
  Utterance,
  type Recogniser,
  type StreamOptions,
} from './pocketsphinx-utterance.js';

const execFileAsync = promisify(execFile);
const openFd = promisify(openCallback);
/** How long a recogniser may take to load its model and open its pipe. */
const startTimeoutMs = 20_000;
/** Utterances waiting for a process, per model, beyond which a request is refused (503). */
const maxWaiting = 64;
const maxOutputBytes = 1024 * 1024;
/** Opens `fifo` for writing once a reader has it open; null if `gone()` first, or on timeout. */
async function openWhenRead(fifo: string, gone: () => boolean): Promise<number | null> {
  const deadline = Date.now() + startTimeoutMs;
  for (;;) {
    try {
      return await openFd(fifo, fsConstants.O_WRONLY | fsConstants.O_NONBLOCK);
    } catch (error) {
      // ENXIO: nobody reads the pipe yet.
      if ((error as NodeJS.ErrnoException).code !== 'ENXIO') throw error;
    }
    if (gone() || Date.now() > deadline) return null;
    await sleep(15);
  }
}

/** Processes running at once, and the utterances waiting for one, in order of arrival. */
class ProcessSlots {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly size: number) {}

  async acquire(signal: AbortSignal): Promise<() => void> {
    if (this.running < this.size) {
      this.running += 1;
      return this.releaser();
    }
    if (this.waiting.length >= maxWaiting) {
      throw new UpstreamError(
        'model_unavailable',
        'Every PocketSphinx process is busy and the queue is full; retry in a moment.',
        { retryAfterSeconds: 2, fallbackWorthy: false },
      );
    }
    await new Promise<void>((resolve, reject) => {
      const turn = () => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = () => {
        const index = this.waiting.indexOf(turn);
        if (index !== -1) this.waiting.splice(index, 1);
        reject(new RequestAbortedError());
      };
      this.waiting.push(turn);
      signal.addEventListener('abort', onAbort, { once: true });
    });
    return this.releaser();
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      // The slot passes straight to the next utterance in line.
      if (next !== undefined) next();
      else this.running -= 1;
    };
  }
}

export class PocketSphinxModel implements TranscriptionModel {
  readonly sampleRate = sampleRate;
  private spare: Promise<Recogniser> | null = null;
  private directory: Promise<string> | undefined;
  private sequence = 0;
  private closed = false;
  private readonly slots: ProcessSlots;

  constructor(
    private readonly definition: EngineModelDefinition,
    private readonly timeoutMs: number,
    maxProcesses = 2,
  ) {
    this.slots = new ProcessSlots(maxProcesses);
  }

  async transcribe(request: TranscriptionRequest): Promise<Transcription> {
    const stream = this.openStream({
      language: request.language,
      signal: request.signal,
      onInterim: () => undefined,
    });
    stream.write(request.audio.samples);
    return stream.finish();
  }

  openStream(options: StreamOptions): TranscriptionStream {
    const slot = this.slots.acquire(options.signal);
    const recogniser = slot.then(() => {
      const taken = this.spare;
      this.spare = null;
      return (taken ?? this.start()).then((candidate) =>
        candidate.child.exitCode === null && candidate.child.signalCode === null
          ? candidate
          : this.start(),
      );
    });
    // Whatever happens to the utterance, its process slot is given back once.
    const release = () => void slot.then((free) => free()).catch(() => undefined);
    // The next utterance finds its process loaded.
    setImmediate(() => this.prewarm());
    const utterance = new Utterance(options, {
      timeoutMs: this.timeoutMs,
      timedOut: () =>
        new UpstreamError(
          'upstream_timeout',
          `PocketSphinx did not finish transcribing in time (model '${this.definition.name}').`,
          { fallbackWorthy: false },
        ),
      failed: (cause) => this.failure(cause),
    });
    const finished = recogniser.then((current) => utterance.decode(current));
    // Observed by finish(); until then a failure must not count as unhandled.
    finished.catch(() => undefined);
    void finished.then(release, release);
    return {
      write: (samples) => utterance.write(samples),
      finish: () => {
        utterance.end();
        return finished;
      },
      abort: () => {
        utterance.stop();
        void recogniser.then((current) => current.child.kill('SIGKILL')).catch(() => undefined);
      },
    };
  }

  /** Starts a process ahead of the first utterance (a voice session calls this as it opens). */
  prewarm(): void {
    if (this.spare === null && !this.closed) {
      this.spare = this.start();
      this.spare.catch(() => undefined);
    }
  }

  /** Stops the spare process (at shutdown). */
  close(): void {
    this.closed = true;
    void this.spare?.then((spare) => spare.child.kill('SIGKILL')).catch(() => undefined);
    this.spare = null;
  }

  /**
   * Starts a recogniser reading a named pipe (a child's standard input is a socket, which
   * pocketsphinx cannot open by name) and resolves once it has opened the pipe and this side holds
   * its writing end; closing that is the end of the audio.
   */
  private async start(): Promise<Recogniser> {
    this.directory ??= mkdtemp(path.join(tmpdir(), 'pocketsphinx-'));
    const directory = await this.directory;
    this.sequence += 1;
    const fifo = path.join(directory, `utterance-${this.sequence}.pcm`);
    try {
      await execFileAsync('mkfifo', ['-m', '600', fifo], { timeout: 5000 });
    } catch (error) {
      throw this.failure(error);
    }
    const models = this.definition.modelDirectory ?? '/usr/share/pocketsphinx/model/en-us';
    const child = execFile(
      this.definition.command ?? 'pocketsphinx_continuous',
      [
        '-infile',
        fifo,
        '-hmm',
        path.join(models, 'en-us'),
        '-lm',
        path.join(models, 'en-us.lm.bin'),
        '-dict',
        path.join(models, 'cmudict-en-us.dict'),
        '-samprate',
        String(sampleRate),
        '-time',
        'yes',
        '-logfn',
        '/dev/null',
      ],
      { maxBuffer: maxOutputBytes, windowsHide: true },
    );
    child.once('error', () => undefined);
    let exited = false;
    child.once('close', () => {
      exited = true;
    });
    let fd: number | null;
    try {
      fd = await openWhenRead(fifo, () => exited || this.closed);
    } catch (error) {
      child.kill('SIGKILL');
      throw this.failure(error);
    }
    if (fd === null) {
      child.kill('SIGKILL');
      void unlink(fifo).catch(() => undefined);
      throw this.failure(new Error('the recogniser never opened its input'));
    }
    // A FIFO descriptor as a libuv pipe: writes wait for room instead of failing with EAGAIN.
    const input = new Socket({ fd, readable: false, writable: true });
    input.on('error', () => undefined);
    const recogniser = { child, input, fifo };
    // A spare left unused for long is stopped; the next utterance starts its own.
    const idle = setTimeout(() => {
      void this.spare?.then((spare) => {
        if (spare === recogniser) {
          this.spare = null;
          child.kill('SIGKILL');
        }
      });
    }, 300_000);
    idle.unref();
    child.once('close', () => {
      clearTimeout(idle);
      input.destroy();
      void unlink(fifo).catch(() => undefined);
    });
    return recogniser;
  }

  private failure(cause: unknown): UpstreamError {
    return new UpstreamError(
      'upstream_error',
      `PocketSphinx failed to transcribe the audio (model '${this.definition.name}').`,
      { cause, fallbackWorthy: false },
    );
  }
}
