// What /v1/audio/transcriptions answers in each of OpenAI's response formats (json, text, srt,
// vtt, verbose_json) from one transcription, and what /v1/audio/speech answers in each audio
// format: pure functions over the speech service's outcome, kept apart from the routes.
import { deflateSync } from 'node:zlib';
import type { OutputFormat } from '../../audio/audio-types.js';
import type { TimedWord, TranscriptSegment } from '../../models/speech/speech-models.js';

export const transcriptFormats = ['json', 'text', 'srt', 'vtt', 'verbose_json'] as const;
export type TranscriptFormat = (typeof transcriptFormats)[number];

export const timestampGranularities = ['word', 'segment'] as const;
export type TimestampGranularity = (typeof timestampGranularities)[number];

/** What a transcription gives the formats: the speech service's outcome, in brief. */
export interface TranscriptSource {
  text: string;
  /** A short code (`en`); null: unknown. */
  language: string | null;
  confidence: number | null;
  durationSeconds: number;
  segments?: readonly TranscriptSegment[] | undefined;
}

export interface TranscriptOptions {
  /** The request's `temperature` (OpenAI's segments echo it). */
  temperature: number;
  /** The request's `timestamp_granularities[]`; empty: OpenAI's default, segments. */
  granularities: readonly TimestampGranularity[];
}

/** OpenAI's `json` and `verbose_json` answers (the latter has every optional field it asks for). */
export interface TranscriptJson {
  text: string;
  task?: string;
  language?: string;
  duration?: number;
  segments?: {
    id: number;
    seek: number;
    start: number;
    end: number;
    text: string;
    tokens: number[];
    temperature: number;
    avg_logprob: number;
    compression_ratio: number;
    no_speech_prob: number;
  }[];
  words?: TimedWord[];
  usage: { type: 'duration'; seconds: number };
}

/** An answer: its content type and body (an object is serialised as JSON). */
export interface Rendered {
  contentType: string;
  body: string | TranscriptJson;
}

const round = (seconds: number) => Math.round(seconds * 1000) / 1000;

/**
 * The segments to show: the engine's (PocketSphinx times each utterance and word), else, for an
 * engine that gives none, the whole audio as one segment; none for silence.
 */
function segmentsOf(source: TranscriptSource): TranscriptSegment[] {
  const given = (source.segments ?? []).filter((segment) => segment.text.trim() !== '');
  if (given.length > 0) return [...given];
  if (source.text === '') return [];
  return [
    {
      text: source.text,
      start: 0,
      end: source.durationSeconds,
      words: [],
      confidence: source.confidence,
    },
  ];
}

/** `00:01:02,345` (SRT) or `00:01:02.345` (WebVTT). */
export function timestamp(seconds: number, separator: ',' | '.'): string {
  const total = Math.max(0, Math.round(seconds * 1000));
  const pad = (value: number, width = 2) => String(value).padStart(width, '0');
  const hours = Math.floor(total / 3_600_000);
  const minutes = Math.floor(total / 60_000) % 60;
  const wholeSeconds = Math.floor(total / 1000) % 60;
  return `${pad(hours)}:${pad(minutes)}:${pad(wholeSeconds)}${separator}${pad(total % 1000, 3)}`;
}

function srt(segments: readonly TranscriptSegment[]): string {
  return segments
    .map(
      (segment, index) =>
        `${index + 1}\n${timestamp(segment.start, ',')} --> ${timestamp(segment.end, ',')}\n${segment.text}\n`,
    )
    .join('\n');
}

function vtt(segments: readonly TranscriptSegment[]): string {
  const cues = segments.map(
    (segment) =>
      `${timestamp(segment.start, '.')} --> ${timestamp(segment.end, '.')}\n${segment.text}\n`,
  );
  return ['WEBVTT\n', ...cues].join('\n');
}

/** Whisper's measure of repetition: the text's length over its deflated length. */
function compressionRatio(text: string): number {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length === 0) return 0;
  return Math.round((bytes.length / deflateSync(bytes).length) * 1000) / 1000;
}

/** A confidence as Whisper's average log probability (finite: 0 is taken as one in a million). */
function logProbability(confidence: number | null): number {
  return Math.round(Math.log(Math.max(confidence ?? 1, 1e-6)) * 10_000) / 10_000;
}

const languageNames = new Intl.DisplayNames(['en'], { type: 'language', fallback: 'none' });

/** Whisper names the language in English, lower case (`english`); `en` → `english`. */
export function languageName(code: string | null): string {
  if (code === null) return 'unknown';
  try {
    return languageNames.of(code)?.toLowerCase() ?? code;
  } catch {
    return code;
  }
}

function verboseJson(source: TranscriptSource, options: TranscriptOptions): TranscriptJson {
  const segments = segmentsOf(source);
  const granularities: readonly TimestampGranularity[] =
    options.granularities.length === 0 ? ['segment'] : options.granularities;
  const words: TimedWord[] = segments.flatMap((segment) =>
    segment.words.map((word) => ({
      word: word.word,
      start: round(word.start),
      end: round(word.end),
    })),
  );
  return {
    task: 'transcribe',
    language: languageName(source.language),
    duration: round(source.durationSeconds),
    text: source.text,
    ...(granularities.includes('segment')
      ? {
          segments: segments.map((segment, id) => ({
            id,
            seek: 0,
            start: round(segment.start),
            end: round(segment.end),
            text: segment.text,
            tokens: [],
            temperature: options.temperature,
            avg_logprob: logProbability(segment.confidence ?? source.confidence),
            compression_ratio: compressionRatio(segment.text),
            no_speech_prob: 0,
          })),
        }
      : {}),
    ...(granularities.includes('word') ? { words } : {}),
    usage: { type: 'duration', seconds: Math.ceil(source.durationSeconds) },
  };
}

/** The transcription in the asked format. */
export function renderTranscript(
  source: TranscriptSource,
  format: TranscriptFormat,
  options: TranscriptOptions,
): Rendered {
  switch (format) {
    case 'json':
      return {
        contentType: 'application/json; charset=utf-8',
        body: {
          text: source.text,
          usage: { type: 'duration', seconds: Math.ceil(source.durationSeconds) },
        },
      };
    case 'text':
      return { contentType: 'text/plain; charset=utf-8', body: `${source.text}\n` };
    case 'srt':
      return { contentType: 'text/plain; charset=utf-8', body: srt(segmentsOf(source)) };
    case 'vtt':
      return { contentType: 'text/vtt; charset=utf-8', body: vtt(segmentsOf(source)) };
    case 'verbose_json':
      return {
        contentType: 'application/json; charset=utf-8',
        body: verboseJson(source, options),
      };
  }
}

/** OpenAI's speech formats; `encoded` says which this server encodes (the rest answer 400). */
export const speechFormats = ['mp3', 'opus', 'aac', 'flac', 'wav', 'pcm'] as const;
export type SpeechFormat = (typeof speechFormats)[number];

/**
 * The formats a well-kept encoder on Node 20 gives this server: LAME (WebAssembly) for MP3, and
 * WAV and raw PCM, which need none. Opus, AAC and FLAC have no such encoder among its packages.
 */
export const encodedSpeechFormats: Partial<Record<SpeechFormat, OutputFormat>> = {
  mp3: 'mp3',
  wav: 'wav',
  pcm: 'pcm',
};

export const speechContentTypes: Record<OutputFormat, string> = {
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
  pcm: 'audio/pcm',
};

/** OpenAI's rate for every speech format (its `pcm` is documented as 24 kHz, 16-bit, mono). */
export const speechSampleRate = 24_000;
