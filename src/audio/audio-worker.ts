// The audio worker thread's tasks (run by Piscina): decoding and resampling incoming audio,
// encoding outgoing audio, and eSpeak NG synthesis. Results go back as transferable buffers.
import { decodeAudio, downmix, encodeAudio, floatToInt16, resample } from './audio-codecs.js';
import {
  AudioFormatError,
  int16ToFloat,
  sniffFormat,
  type InputFormat,
  type OutputFormat,
} from './audio-types.js';
import {
  espeakHasVoice,
  espeakSampleRate,
  espeakSynthesize,
  espeakVoices,
  espeakWarmUp,
  UnknownVoiceError,
} from './espeak.js';

// The decoders print every error they meet to the console (mpg123 once per bad frame): a hostile
// file would flood the service's output. Their errors come back in their results instead.
console.error = () => undefined;
console.warn = () => undefined;

/** Errors cross the thread boundary as data: their class does not survive structured cloning. */
export type TaskResult<T> =
  | { ok: true; value: T }
  | { ok: false; kind: 'audio_format' | 'unknown_voice' | 'failure'; message: string };

async function settle<T>(work: () => Promise<T>): Promise<TaskResult<T>> {
  try {
    return { ok: true, value: await work() };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (error instanceof AudioFormatError) return { ok: false, kind: 'audio_format', message };
    if (error instanceof UnknownVoiceError) return { ok: false, kind: 'unknown_voice', message };
    return { ok: false, kind: 'failure', message };
  }
}

export interface PrepareTask {
  bytes: Uint8Array;
  format: InputFormat | null;
  sampleRate?: number;
  channels?: number;
  targetRate: number;
  /** The longest audio accepted (seconds): decoding stops with a 400 past it. */
  maxSeconds: number;
}

export interface PreparedAudio {
  samples: Int16Array;
  sampleRate: number;
  /** Duration of the audio as sent, before resampling. */
  durationSeconds: number;
  /** The container that was decoded (`linear16` for raw PCM). */
  format: InputFormat;
}

/** Decodes any supported input to mono 16-bit PCM at `targetRate`. */
export function prepare(task: PrepareTask): Promise<TaskResult<PreparedAudio>> {
  return settle(() => prepareAudio(task));
}

async function prepareAudio(task: PrepareTask): Promise<PreparedAudio> {
  const decoded = await decodeAudio(task.bytes, {
    format: task.format,
    ...(task.sampleRate === undefined ? {} : { sampleRate: task.sampleRate }),
    ...(task.channels === undefined ? {} : { channels: task.channels }),
    limits: { maxSeconds: task.maxSeconds },
  });
  const mono = downmix(decoded);
  const samples = floatToInt16(await resample(mono, decoded.sampleRate, task.targetRate));
  return {
    samples,
    sampleRate: task.targetRate,
    durationSeconds: mono.length / decoded.sampleRate,
    format: task.format === 'linear16' ? 'linear16' : (sniffFormat(task.bytes) ?? 'wav'),
  };
}

export interface RenderTask {
  samples: Int16Array;
  sampleRate: number;
  targetRate: number;
  format: OutputFormat;
}

/** Resamples mono PCM to `targetRate` and encodes it. */
export function render(task: RenderTask): Promise<TaskResult<Uint8Array>> {
  return settle(async () => {
    const samples =
      task.sampleRate === task.targetRate
        ? task.samples
        : floatToInt16(
            await resample(int16ToFloat(task.samples), task.sampleRate, task.targetRate),
          );
    return encodeAudio(samples, task.targetRate, task.format);
  });
}

export interface SynthesizeTask {
  text: string;
  voice: string;
  wordsPerMinute: number | null;
}

export function synthesize(
  task: SynthesizeTask,
): Promise<TaskResult<{ samples: Int16Array; sampleRate: number }>> {
  return settle(async () => ({
    samples: await espeakSynthesize(task.text, task.voice, task.wordsPerMinute),
    sampleRate: espeakSampleRate,
  }));
}

export function voices() {
  return settle(() => espeakVoices());
}

export function hasVoice(task: { voice: string }) {
  return settle(() => espeakHasVoice(task.voice));
}

export function warmUp() {
  return settle(() => espeakWarmUp());
}
