// One utterance through one PocketSphinx process: audio written before the process is ready waits,
// interim text is reported as it arrives, and the process is killed past its deadlines.
export interface UtteranceLimits {
  timeoutMs: number;
  timedOut: () => UpstreamError;
  failed: (cause: Error) => UpstreamError;
}

import type { ChildProcess } from 'node:child_process';
import { unlink } from 'node:fs/promises';
import type { Socket } from 'node:net';
import { RequestAbortedError, type UpstreamError } from '../../spec.js';
import type { Transcription } from '../speech-models.js';

export const sampleRate = 16_000;
/** After the end of the audio: this long, plus twice the audio's duration, to finish decoding. */
const decodeGraceMs = 10_000;
/** A word line of `-time yes` output: word, start, end, posterior probability. */
const segmentLine = /^(\S+) (-?\d+\.\d+) (-?\d+\.\d+) (-?\d+\.\d+)$/;
const fillers = /^(<s>|<\/s>|<sil>|\[.*\]|\+\+.*\+\+)$/;

interface Decoded {
  hypotheses: string[];
  posteriors: number[];
}

export function parseOutput(output: string): Decoded {
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

export function transcriptionOf(decoded: Decoded): Transcription {
  const text = decoded.hypotheses.join(' ').replace(/\s+/g, ' ').trim();
  const confidence =
    decoded.posteriors.length === 0
      ? text === ''
        ? 1
        : null
      : decoded.posteriors.reduce((sum, value) => sum + value, 0) / decoded.posteriors.length;
  return { text, language: 'en', confidence };
}

/** A running recogniser and the named pipe its audio goes through (opened by both ends). */
export interface Recogniser {
  child: ChildProcess;
  input: Socket;
  fifo: string;
}

export interface StreamOptions {
  language: string | null;
  signal: AbortSignal;
  onInterim: (text: string) => void;
}

/**
 * One utterance through one recogniser process: audio written before the process is ready waits,
 * interim text is reported as it arrives, and the process is killed past its deadlines.
 */
export class Utterance {
  private readonly pending: Buffer[] = [];
  private ready: Recogniser | null = null;
  private ended = false;
  private samplesWritten = 0;
  private output = '';
  private interim = '';
  private kill: () => void = () => undefined;
  private decodeDeadline: NodeJS.Timeout | null = null;

  constructor(
    private readonly options: StreamOptions,
    private readonly limits: UtteranceLimits,
  ) {}

  write(samples: Int16Array): void {
    this.samplesWritten += samples.length;
    const chunk = Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength);
    if (this.ready === null) this.pending.push(Buffer.from(chunk));
    else this.ready.input.write(chunk);
  }

  /** The audio has ended (or the utterance was aborted). */
  end(): void {
    this.ended = true;
    if (this.ready !== null) {
      this.ready.input.end();
      this.armDecodeDeadline();
    }
  }

  /** Aborted: nothing more is written; the process is being killed. */
  stop(): void {
    this.ended = true;
  }

  /** Once the audio has ended, decoding what is left takes a fraction of its duration. */
  private armDecodeDeadline(): void {
    if (this.decodeDeadline !== null || this.ready === null) return;
    const audioMs = (this.samplesWritten / sampleRate) * 1000;
    this.decodeDeadline = setTimeout(
      this.kill,
      Math.min(this.limits.timeoutMs, decodeGraceMs + 2 * audioMs),
    );
    this.decodeDeadline.unref();
  }

  /** Feeds the process what is pending and what follows; settles when it exits. */
  decode(current: Recogniser): Promise<Transcription> {
    return new Promise<Transcription>((resolve, reject) => {
      this.ready = current;
      const { child } = current;
      const { signal } = this.options;
      let timedOut = false;
      this.kill = () => {
        timedOut = true;
        child.kill('SIGKILL');
      };
      // Bounded in time from the first word: the utterance itself is bounded by its caller.
      const deadline = setTimeout(this.kill, this.limits.timeoutMs);
      deadline.unref();
      if (this.ended) this.armDecodeDeadline();
      const onAbort = () => child.kill('SIGKILL');
      signal.addEventListener('abort', onAbort, { once: true });
      child.stdout?.setEncoding('utf8');
      child.stdout?.on('data', (chunk: string) => this.heard(chunk));
      child.once('close', (code, exitSignal) => {
        clearTimeout(deadline);
        if (this.decodeDeadline !== null) clearTimeout(this.decodeDeadline);
        signal.removeEventListener('abort', onAbort);
        current.input.destroy();
        void unlink(current.fifo).catch(() => undefined);
        if (signal.aborted) reject(new RequestAbortedError());
        else if (code === 0) resolve(transcriptionOf(parseOutput(this.output)));
        else if (timedOut) reject(this.limits.timedOut());
        else
          reject(
            this.limits.failed(new Error(`exited with ${code ?? exitSignal ?? 'unknown status'}`)),
          );
      });
      for (const chunk of this.pending.splice(0)) current.input.write(chunk);
      if (this.ended) current.input.end();
    });
  }

  private heard(chunk: string): void {
    this.output += chunk;
    const text = transcriptionOf(parseOutput(this.output)).text;
    if (text !== this.interim) {
      this.interim = text;
      this.options.onInterim(text);
    }
  }
}
