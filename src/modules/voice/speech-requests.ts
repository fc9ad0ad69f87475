// What the speech service (speech-service.ts) is asked and answers, and the names it knows: the
// providers' display names, OpenAI's model and voice names that /v1/audio/* takes.
import type { ModelDefinition } from '../../config/config.js';
import type { InputFormat, OutputFormat } from '../../audio/audio-types.js';
import type { CallAttribution } from '../../models/metering.js';
import type { Transcription, Voice } from '../../models/speech/speech-models.js';

/** The providers listing's keys and names, in the listing's order of preference. */
export const providerNames: Record<string, string> = {
  pocketsphinx: 'PocketSphinx (offline, on this server)',
  'sherpa-onnx': 'sherpa-onnx (offline, on this server)',
  openai: 'OpenAI',
  'openai-compatible': 'OpenAI-compatible server',
  deepgram: 'Deepgram',
  'espeak-ng': 'eSpeak NG (offline, on this server)',
};

/**
 * OpenAI's model names of each kind (its CreateTranscriptionRequest and CreateSpeechRequest), which
 * /v1/audio/* takes for the kind's default model when the catalog has no model or alias of the name
 * (`speech.openai_aliases`). Diarization is not among them: no engine here tells speakers apart.
 */
export const openAiModelNames = {
  transcription: [
    'whisper-1',
    'gpt-transcribe',
    'gpt-4o-transcribe',
    'gpt-4o-mini-transcribe',
    'gpt-4o-mini-transcribe-2025-12-15',
  ],
  speech: ['tts-1', 'tts-1-hd', 'gpt-4o-mini-tts', 'gpt-4o-mini-tts-2025-12-15'],
} as const satisfies Record<'transcription' | 'speech', readonly string[]>;

/** OpenAI's built-in voices, taken for a speech model's default voice where it has none of them. */
export const openAiVoiceNames = [
  'alloy',
  'ash',
  'ballad',
  'coral',
  'echo',
  'fable',
  'onyx',
  'nova',
  'sage',
  'shimmer',
  'verse',
  'marin',
  'cedar',
] as const;

export interface TranscribeRequest {
  audio: Uint8Array;
  /** null: detect the container from its first bytes. */
  encoding: InputFormat | null;
  sampleRate: number | undefined;
  channels: number | undefined;
  language: string | null;
  model: string | undefined;
  provider: string | undefined;
  signal: AbortSignal;
  /** Whose call it is (the usage ledger, budgets); unmetered without one. */
  attribution?: CallAttribution | undefined;
}

export interface TranscribeOutcome extends Transcription {
  model: ModelDefinition;
  durationSeconds: number;
}

export interface SynthesizeRequest {
  text: string;
  voice: string | null;
  language: string | null;
  model: string | undefined;
  format: OutputFormat;
  sampleRate: number | undefined;
  /** 1 (the voice's own pace) when absent; other speeds only where the model has `speeds`. */
  speed?: number;
  /** The parameter a refused `speed` is named as. */
  speedParam?: string;
  signal: AbortSignal;
  /** Whose call it is (the usage ledger, budgets); unmetered without one. */
  attribution?: CallAttribution | undefined;
}

export interface SynthesizeOutcome {
  audio: Uint8Array;
  format: OutputFormat;
  sampleRate: number;
  durationSeconds: number;
  model: ModelDefinition;
  voice: string;
}

export interface ModelVoices {
  model: ModelDefinition;
  available: boolean;
  voices: readonly Voice[];
}
