// Transcription by the system's PocketSphinx (Debian's pocketsphinx and pocketsphinx-en-us): one
// pocketsphinx_continuous process per utterance, fed raw 16 kHz PCM through a named pipe while
// the user speaks, so that little is left to decode when they stop. A process is started ahead
// of need (it takes ~0.4 s of CPU to load its model), and every process is bounded in time and
// output.
import { execFile, type ChildProcess } from 'node:child_process';
import type { WriteStream } from 'node:fs';
import { mkdtemp, open, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { EngineModelDefinition } from '../../../config/config.js';
import { UpstreamError, RequestAbortedError } from '../../spec.js';
import type {
  Transcription,
  TranscriptionModel,
  TranscriptionRequest,
  TranscriptionStream,
} from '../speech-models.js';

const execFileAsync = promisify(execFile);
const sampleRate = 16_000;
const maxOutputBytes = 1024 * 1024;
/** A word line of `-time yes` output: word, start, end, posterior probability. */
const segmentLine = /^(\S+) (-?\d+\.\d+) (-?\d+\.\d+) (-?\d+\.\d+)$/;
const fillers = /^(<s>|<\/s>|<sil>|\[.*\]|\+\+.*\+\+)$/;

interface Decoded {
  hypotheses: string[];
  posteriors: number[];
}

function parseOutput(output: string): Decoded {
  const decoded: Decoded = { hypotheses: [], posteriors: [] };
  for (const line of output.split('\n')) {
    const trimmed = line.trim();
    if (trimmed === '') continue;
    const segment = segmentLine.exec(trimmed);
    if (segment === null) decoded.hypotheses.push(trimmed);
    else if (!fillers.test(segment[1]!)) decoded.posteriors.push(Math.min(1, Number(segment[4])));
  }
  return decoded;
}

function transcriptionOf(decoded: Decoded): Transcription {
  const text = decoded.hypotheses.join(' ').replace(/\s+/g, ' ').trim();
  const confidence =
    decoded.posteriors.length === 0
      ? text === ''
        ? 1
        : null
      : decoded.posteriors.reduce((sum, value) => sum + value, 0) / decoded.posteriors.length;
  return { text, language: 'en', confidence };
}

/** A running recogniser and the named pipe its audio goes through. */
interface Recogniser {
  child: ChildProcess;
  input: WriteStream;
  fifo: string;
}

export class PocketSphinxModel implements TranscriptionModel {
  readonly sampleRate = sampleRate;
  private spare: Promise<Recogniser> | null = null;
  private directory: Promise<string> | undefined;
  private sequence = 0;
  private closed = false;

  constructor(
    private readonly definition: EngineModelDefinition,
    private readonly timeoutMs: number,
  ) {}

  async transcribe(request: TranscriptionRequest): Promise<Transcription> {
    const stream = this.openStream({
      language: request.language,
      signal: request.signal,
      onInterim: () => undefined,
    });
    stream.write(request.audio.samples);
    return stream.finish();
  }

  openStream(options: {
    language: string | null;
    signal: AbortSignal;
    onInterim: (text: string) => void;
  }): TranscriptionStream {
    const taken = this.spare;
    this.spare = null;
    const recogniser = (taken ?? this.start()).then((candidate) =>
      candidate.child.exitCode === null && candidate.child.signalCode === null
        ? candidate
        : this.start(),
    );
    // The next utterance finds its process loaded.
    setImmediate(() => {
      if (this.spare === null && !this.closed) {
        this.spare = this.start();
        this.spare.catch(() => undefined);
      }
    });
    const pending: Buffer[] = [];
    let ready: Recogniser | null = null;
    let ended = false;
    let output = '';
    let interim = '';
    const finished = recogniser.then(
      (current) =>
        new Promise<Transcription>((resolve, reject) => {
          ready = current;
          const { child } = current;
          // Bounded in time from the first word: the utterance itself is bounded by its caller.
          const deadline = setTimeout(() => child.kill('SIGKILL'), this.timeoutMs);
          deadline.unref();
          const onAbort = () => child.kill('SIGKILL');
          options.signal.addEventListener('abort', onAbort, { once: true });
          child.stdout?.setEncoding('utf8');
          child.stdout?.on('data', (chunk: string) => {
            output += chunk;
            const text = transcriptionOf(parseOutput(output)).text;
            if (text !== interim) {
              interim = text;
              options.onInterim(text);
            }
          });
          child.once('close', (code, signal) => {
            clearTimeout(deadline);
            options.signal.removeEventListener('abort', onAbort);
            current.input.destroy();
            void unlink(current.fifo).catch(() => undefined);
            if (options.signal.aborted) reject(new RequestAbortedError());
            else if (code === 0) resolve(transcriptionOf(parseOutput(output)));
            else
              reject(this.failure(new Error(`exited with ${code ?? signal ?? 'unknown status'}`)));
          });
          for (const chunk of pending.splice(0)) current.input.write(chunk);
          if (ended) current.input.end();
        }),
    );
    // Observed by finish(); until then a failure must not count as unhandled.
    finished.catch(() => undefined);
    return {
      write(samples: Int16Array) {
        const chunk = Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength);
        if (ready === null) pending.push(Buffer.from(chunk));
        else ready.input.write(chunk);
      },
      finish() {
        ended = true;
        ready?.input.end();
        return finished;
      },
      abort() {
        ended = true;
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
   * Starts a recogniser reading a named pipe: a child's standard input is a socket, which
   * pocketsphinx cannot open by name. The pipe is opened read-write on this side so that opening
   * never waits for the reader; closing it is the end of the audio.
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
    const handle = await open(fifo, 'r+');
    const input = handle.createWriteStream();
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
