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
import type { TimedWord, Transcription } from '../speech-models.js';

export const sampleRate = 16_000;
/** After the end of the audio: this long, plus twice the audio's duration, to finish decoding. */
const decodeGraceMs = 10_000;
/** A word line of `-time yes` output: word, start, end, posterior probability. */
const segmentLine = /^(\S+) (-?\d+\.\d+) (-?\d+\.\d+) (-?\d+\.\d+)$/;
const fillers = /^(<s>|<\/s>|<sil>|\[.*\]|\+\+.*\+\+)$/;

interface DecodedSegment {
  text: string;
  /** From the utterance's `<s>` to its `</s>` (else its first and last word). */
  start: number | null;
  end: number | null;
  words: TimedWord[];
  posteriors: number[];
  /** Its `</s>` was seen: a further `<s>` opens the next utterance. */
  closed: boolean;
}

interface Decoded {
  hypotheses: string[];
  posteriors: number[];
  /** One per utterance pocketsphinx_continuous decoded (it splits the audio at pauses). */
  segments: DecodedSegment[];
}

/**
 * Reads `-time yes` output: per utterance, its hypothesis on a line, then a line per word (and per
 * filler: `<s>`, `<sil>`, `</s>`) with its start and end in seconds from the start of the audio and
 * its posterior probability. An alternative pronunciation is marked `word(2)`. Only whole lines
 * are read: the output is also read while it arrives, for interim text.
 */
export function parseOutput(output: string): Decoded {
  const decoded: Decoded = { hypotheses: [], posteriors: [], segments: [] };
  let segment: DecodedSegment | null = null;
  const open = (text: string): DecodedSegment => {
    const opened: DecodedSegment = {
      text,
      start: null,
      end: null,
      words: [],
      posteriors: [],
      closed: false,
    };
    decoded.segments.push(opened);
    return opened;
  };
  // A line still arriving (no newline yet) is read once it is whole.
  const whole = output.slice(0, output.lastIndexOf('\n') + 1);
  for (const line of whole.split('\n')) {
    const trimmed = line.trim();
    if (trimmed === '') continue;
    const timed = segmentLine.exec(trimmed);
    if (timed === null) {
      decoded.hypotheses.push(trimmed);
      segment = open(trimmed);
      continue;
    }
    const [, token = '', startText, endText, posteriorText] = timed;
    const start = Number(startText);
    const end = Number(endText);
    if (token === '<s>' && (segment === null || segment.closed)) segment = open('');
    segment ??= open('');
    if (token === '<s>') segment.start = start;
    else if (token === '</s>') {
      segment.end = end;
      segment.closed = true;
    }
    if (fillers.test(token)) continue;
    const posterior = Math.min(1, Number(posteriorText));
    decoded.posteriors.push(posterior);
    segment.posteriors.push(posterior);
    segment.words.push({ word: token.replace(/\(\d+\)$/, ''), start, end });
  }
  return decoded;
}

const mean = (values: readonly number[]): number | null =>
  values.length === 0 ? null : values.reduce((sum, value) => sum + value, 0) / values.length;

export function transcriptionOf(decoded: Decoded): Transcription {
  const text = decoded.hypotheses.join(' ').replace(/\s+/g, ' ').trim();
  const confidence =
    decoded.posteriors.length === 0 ? (text === '' ? 1 : null) : mean(decoded.posteriors);
  const segments = decoded.segments
    .filter((segment) => segment.text !== '')
    .map((segment) => ({
      text: segment.text,
      start: segment.start ?? segment.words[0]?.start ?? 0,
      end: segment.end ?? segment.words.at(-1)?.end ?? segment.start ?? 0,
      words: segment.words,
      confidence: mean(segment.posteriors),
    }));
  return { text, language: 'en', confidence, segments };
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
