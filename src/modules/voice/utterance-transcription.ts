// From detected speech to text: an utterance's audio is streamed to an engine that decodes while
// it arrives, or kept and transcribed once it ends (resampled to the engine's rate); and the
// resampling of the client's PCM to the rate of voice activity detection.
import type { InputFormat } from '../../audio/audio-types.js';
import { vadSampleRate } from '../../audio/vad.js';
import type { ModelRegistry } from '../../models/model-registry.js';
import type { TranscriptionStream } from '../../models/speech/speech-models.js';
import type { SpeechService } from './speech-service.js';
import { noUsage } from '../../models/metering.js';
import { meteredCall } from './speech-metering.js';
import { voiceAttribution, type VoiceSettings } from './voice-events.js';

/** One utterance, from the onset of speech to its end. */
export interface Utterance {
  turnId: string;
  stream: TranscriptionStream | null;
  /** Kept when the engine cannot decode while audio arrives. */
  chunks: Int16Array[];
  samples: number;
  silentFrames: number;
  startedAt: number;
}

export interface Transcriber {
  settings: VoiceSettings;
  speech: SpeechService;
  models: ModelRegistry;
}

export interface Transcript {
  text: string;
  confidence: number | null;
  language: string | null;
}

/** A resampler of a stream of audio: each call converts the next part. */
export type Resampler = { full(data: Float32Array): Float32Array; destroy(): void };

function toFloats(samples: Int16Array): Float32Array {
  return Float32Array.from(samples, (value) => value / 32768);
}

function toPcm16(value: number): number {
  return Math.max(-32768, Math.min(32767, Math.round(value * 32767)));
}

/** A resampler from `fromRate` to the rate of voice activity detection (16 kHz). */
export async function createResampler(fromRate: number): Promise<Resampler> {
  const { create, ConverterType } = (await import('@alexanderolsen/libsamplerate-js')).default;
  return create(1, fromRate, vadSampleRate, { converterType: ConverterType.SRC_SINC_FASTEST });
}

/** The next part of a stream of PCM16, at the detector's rate. */
export function resample(resampler: Resampler, samples: Int16Array): Int16Array {
  const converted = resampler.full(toFloats(samples));
  return Int16Array.from(converted, toPcm16);
}

/** A whole utterance from the detector's rate (16 kHz) to `rate`. */
async function toRate(samples: Int16Array, rate: number): Promise<Int16Array> {
  if (rate === vadSampleRate) return samples;
  const { create, ConverterType } = (await import('@alexanderolsen/libsamplerate-js')).default;
  const converter = await create(1, vadSampleRate, rate, {
    converterType: ConverterType.SRC_SINC_FASTEST,
  });
  try {
    return Int16Array.from(converter.simple(toFloats(samples)), toPcm16);
  } finally {
    converter.destroy();
  }
}

/**
 * The engine's stream for an utterance when it decodes while audio arrives at the detector's
 * rate (interim text goes to `onInterim`), else null: the audio is kept until the end.
 */
export function openTranscription(
  transcriber: Transcriber,
  onInterim: (text: string) => void,
): TranscriptionStream | null {
  const { settings, speech, models } = transcriber;
  const name = speech.resolveTranscriptionModel(settings.sttModel, undefined);
  const model = models.model('transcription', name);
  if (model.openStream === undefined || model.sampleRate !== vadSampleRate) return null;
  return model.openStream({
    language: settings.language,
    signal: new AbortController().signal,
    onInterim,
  });
}

/** What was said in an utterance that has ended. */
export async function transcribeUtterance(
  transcriber: Transcriber,
  utterance: Utterance,
): Promise<Transcript> {
  const { settings, speech, models } = transcriber;
  const stream = utterance.stream;
  if (stream !== null) {
    // Decoded while it arrived: metered, as a whole recording is, by the audio's length.
    const name = speech.resolveTranscriptionModel(settings.sttModel, undefined);
    const audioMs = (utterance.samples / vadSampleRate) * 1000;
    const { text, confidence, language } = await meteredCall(
      models.usageMeter,
      models.definitionOf(name),
      voiceAttribution(settings),
      { ...noUsage, audioMs },
      () => stream.finish(),
    );
    return { text, confidence, language };
  }
  const samples = new Int16Array(utterance.samples);
  let offset = 0;
  for (const chunk of utterance.chunks) {
    samples.set(chunk, offset);
    offset += chunk.length;
  }
  const name = speech.resolveTranscriptionModel(settings.sttModel, undefined);
  const model = models.model('transcription', name);
  const { text, confidence, language } = await speech.transcribePcm(
    name,
    { samples: await toRate(samples, model.sampleRate), sampleRate: model.sampleRate },
    settings.language,
    AbortSignal.timeout(60_000),
    voiceAttribution(settings),
  );
  return { text, confidence, language };
}

/** What was said in a whole recording (an encoded file or raw PCM16, mono). */
export function transcribeWhole(
  transcriber: Transcriber,
  audio: Uint8Array,
  format: InputFormat | null,
  sampleRate: number | undefined,
): Promise<Transcript> {
  const { settings, speech } = transcriber;
  return speech.transcribe({
    audio,
    encoding: format,
    sampleRate,
    channels: 1,
    language: settings.language,
    model: settings.sttModel,
    provider: undefined,
    signal: AbortSignal.timeout(60_000),
    attribution: voiceAttribution(settings),
  });
}
