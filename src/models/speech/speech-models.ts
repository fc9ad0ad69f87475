// The interfaces transcription and speech models implement (whatever engine or vendor serves them)
// and the audio they exchange: mono 16-bit PCM at a stated rate.

/** Mono, 16-bit signed PCM. */
export interface Pcm {
  readonly samples: Int16Array;
  readonly sampleRate: number;
}

export interface Transcription {
  readonly text: string;
  /** The language the engine detected or was told (BCP 47 or a short code); null: unknown. */
  readonly language: string | null;
  /** The engine's own confidence in 0..1; null when the engine reports none. */
  readonly confidence: number | null;
  /** Where each stretch of speech lies in the audio, when the engine says (PocketSphinx does). */
  readonly segments?: readonly TranscriptSegment[];
}

/** A stretch of speech the engine decoded as one utterance; times in seconds from the start. */
export interface TranscriptSegment {
  readonly text: string;
  readonly start: number;
  readonly end: number;
  readonly words: readonly TimedWord[];
  /** The mean of the words' own confidences (0..1); null when the engine gives none. */
  readonly confidence: number | null;
}

export interface TimedWord {
  readonly word: string;
  readonly start: number;
  readonly end: number;
}

export interface TranscriptionRequest {
  readonly audio: Pcm;
  /** BCP 47 (`en-US`); null lets the engine detect it where it can. */
  readonly language: string | null;
  readonly signal: AbortSignal;
}

/** Decoding while audio arrives, so that the end of an utterance leaves little work. */
export interface TranscriptionStream {
  /** More audio, at the model's `sampleRate`. */
  write(samples: Int16Array): void;
  /** Ends the audio and resolves with the whole utterance's transcription. */
  finish(): Promise<Transcription>;
  abort(): void;
}

export interface TranscriptionModel {
  /** The rate audio is given at (the service resamples to it). */
  readonly sampleRate: number;
  transcribe(request: TranscriptionRequest): Promise<Transcription>;
  /**
   * Present when the engine decodes incrementally; `onInterim` receives the text so far whenever
   * the engine has a new partial result.
   */
  openStream?(options: {
    language: string | null;
    signal: AbortSignal;
    onInterim: (text: string) => void;
  }): TranscriptionStream;
  /** Gets ready for a first utterance soon (loads what it can ahead of time). */
  prewarm?(): void;
}

export interface Voice {
  readonly id: string;
  readonly name: string;
  /** BCP 47 tags; empty: speaks any language it is given. */
  readonly languages: readonly string[];
}

export interface SynthesisRequest {
  readonly text: string;
  /** A voice of `voices()`; null: the one for `language`, else the model's default. */
  readonly voice: string | null;
  readonly language: string | null;
  /** How fast to speak, 1 being the voice's own pace; within the model's `speeds`. */
  readonly speed?: number;
  readonly signal: AbortSignal;
}

export interface SpeechModel {
  /** The speeds the model can speak at (absent: only its own pace, 1). */
  readonly speeds?: { readonly min: number; readonly max: number };
  voices(): Promise<readonly Voice[]>;
  /** The voice a request ends up with (the default, or the best match for its language). */
  resolveVoice(voice: string | null, language: string | null): Promise<string>;
  synthesize(request: SynthesisRequest): Promise<Pcm>;
}

/** `en_us` → `en-US`; `EN` → `en`. */
export function normaliseLanguageTag(tag: string): string {
  const [language = '', ...rest] = tag.replaceAll('_', '-').split('-');
  return [
    language.toLowerCase(),
    ...rest.map((part) => (part.length === 2 ? part.toUpperCase() : part.toLowerCase())),
  ].join('-');
}

/** Whether a voice's languages serve `language` (same tag, or the same primary language). */
export function speaksLanguage(voice: Voice, language: string): boolean {
  const wanted = normaliseLanguageTag(language);
  const primary = wanted.split('-')[0];
  return voice.languages.some(
    (tag) => normaliseLanguageTag(tag) === wanted || normaliseLanguageTag(tag) === primary,
  );
}
