// Speech by eSpeak NG (compiled to JavaScript, in the audio worker threads): 100+ languages, no download.
import type { EngineModelDefinition } from '../../../config/config.js';
import { InvalidParameterError } from '../../../errors/app-error.js';
import type { AudioPool } from '../../../audio/audio-pool.js';
import {
  normaliseLanguageTag,
  speaksLanguage,
  type Pcm,
  type SpeechModel,
  type SynthesisRequest,
  type Voice,
} from '../speech-models.js';

/** A voice id, optionally with one of eSpeak's variants (`en-us+klatt`, `de+f2`). */
const voicePattern = /^([a-z0-9-]{1,40})(\+[a-z0-9_]{1,20})?$/;

/** eSpeak's own pace, and the rates it speaks at (it clamps any other to these). */
const wordsPerMinute = { normal: 175, min: 80, max: 450 };

export class EspeakNgModel implements SpeechModel {
  readonly speeds = {
    min: wordsPerMinute.min / wordsPerMinute.normal,
    max: wordsPerMinute.max / wordsPerMinute.normal,
  };
  private voiceList: Promise<readonly Voice[]> | undefined;

  constructor(
    private readonly definition: EngineModelDefinition,
    private readonly pool: AudioPool,
  ) {}

  voices(): Promise<readonly Voice[]> {
    this.voiceList ??= this.pool.espeakVoices().catch((error: unknown) => {
      this.voiceList = undefined;
      throw error;
    });
    return this.voiceList;
  }

  async resolveVoice(voice: string | null, language: string | null): Promise<string> {
    const voices = await this.voices();
    if (voice !== null) {
      const match = voicePattern.exec(voice);
      if (match === null || !voices.some((candidate) => candidate.id === match[1])) {
        throw new InvalidParameterError(
          'voice_id',
          `Model '${this.definition.name}' has no voice '${voice}'. GET /v1/speech/voices lists them (a variant may follow, as in 'en-us+klatt').`,
        );
      }
      if (match[2] !== undefined && !(await this.pool.espeakHasVoice(voice))) {
        throw new InvalidParameterError(
          'voice_id',
          `eSpeak NG has no variant '${match[2].slice(1)}'.`,
        );
      }
      return voice;
    }
    if (language !== null) {
      // The voice whose main language is the one asked for, then any that speaks it.
      const wanted = normaliseLanguageTag(language);
      const byLanguage =
        voices.find((candidate) => candidate.languages[0] === wanted) ??
        voices.find((candidate) => candidate.languages[0] === wanted.split('-')[0]) ??
        voices.find((candidate) => speaksLanguage(candidate, language));
      if (byLanguage !== undefined) return byLanguage.id;
    }
    return this.definition.speech?.defaultVoice ?? 'en-us';
  }

  async synthesize(request: SynthesisRequest): Promise<Pcm> {
    const voice = await this.resolveVoice(request.voice, request.language);
    return this.pool.synthesize(
      {
        text: request.text,
        voice,
        wordsPerMinute:
          request.speed === undefined ? null : Math.round(wordsPerMinute.normal * request.speed),
      },
      request.signal,
    );
  }
}
