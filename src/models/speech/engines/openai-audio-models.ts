// OpenAI's audio API, also spoken by self-hosted servers (Speaches, LocalAI, vLLM…):
// POST /audio/transcriptions (multipart, verbose_json) and POST /audio/speech (raw 24 kHz PCM).
import type { RemoteModelDefinition, SecretSource } from '../../../config/config.js';
import { UpstreamError } from '../../spec.js';
import { wavFile } from '../../../audio/wav.js';
import type {
  Pcm,
  SpeechModel,
  SynthesisRequest,
  Transcription,
  TranscriptionModel,
  TranscriptionRequest,
  Voice,
} from '../speech-models.js';
import { authorizationOf, baseUrlOf, callSpeechApi, jsonOf, pcmFromBytes } from './speech-http.js';

interface VerboseTranscription {
  text?: string;
  language?: string;
  segments?: { avg_logprob?: number }[];
}

/** Whisper names languages in English ("english"); the service answers with short codes. */
const whisperLanguages: Record<string, string> = {
  english: 'en',
  german: 'de',
  french: 'fr',
  spanish: 'es',
  italian: 'it',
  portuguese: 'pt',
  dutch: 'nl',
  russian: 'ru',
  chinese: 'zh',
  japanese: 'ja',
  korean: 'ko',
  arabic: 'ar',
  hindi: 'hi',
  polish: 'pl',
  turkish: 'tr',
  swedish: 'sv',
  ukrainian: 'uk',
  czech: 'cs',
};

export class OpenAiTranscriptionModel implements TranscriptionModel {
  readonly sampleRate = 16_000;

  constructor(
    private readonly definition: RemoteModelDefinition,
    private readonly secrets: SecretSource,
  ) {}

  async transcribe(request: TranscriptionRequest): Promise<Transcription> {
    const wav = wavFile(request.audio.samples, request.audio.sampleRate);
    const body = await callSpeechApi(
      this.definition,
      () => {
        const form = new FormData();
        form.append('file', new Blob([wav], { type: 'audio/wav' }), 'audio.wav');
        form.append('model', this.definition.model);
        form.append('response_format', 'verbose_json');
        if (request.language !== null) form.append('language', request.language.split('-')[0]!);
        return {
          url: `${baseUrlOf(this.definition, 'https://api.openai.com/v1')}/audio/transcriptions`,
          init: {
            method: 'POST',
            headers: authorizationOf(this.definition, this.secrets, 'Bearer'),
            body: form,
          },
        };
      },
      request.signal,
      (response) => jsonOf<VerboseTranscription>(this.definition, response),
    );
    if (typeof body.text !== 'string') {
      throw new UpstreamError(
        'upstream_error',
        `The provider of model '${this.definition.name}' sent a transcription without text.`,
      );
    }
    const logProbabilities = (body.segments ?? [])
      .map((segment) => segment.avg_logprob)
      .filter((value): value is number => typeof value === 'number');
    const detected = body.language?.toLowerCase();
    return {
      text: body.text.trim(),
      language:
        detected === undefined ? request.language : (whisperLanguages[detected] ?? detected),
      confidence:
        logProbabilities.length === 0
          ? null
          : Math.exp(
              logProbabilities.reduce((sum, value) => sum + value, 0) / logProbabilities.length,
            ),
    };
  }
}

/** OpenAI's `pcm` response format: 24 kHz, 16-bit signed little-endian, mono. */
const openAiPcmRate = 24_000;

export class OpenAiSpeechModel implements SpeechModel {
  /** OpenAI's `speed` range (servers that speak the API take it too). */
  readonly speeds = { min: 0.25, max: 4 };

  constructor(
    private readonly definition: RemoteModelDefinition,
    private readonly secrets: SecretSource,
  ) {}

  voices(): Promise<readonly Voice[]> {
    return Promise.resolve(this.definition.speech?.voices ?? []);
  }

  async resolveVoice(voice: string | null): Promise<string> {
    const voices = await this.voices();
    const chosen = voice ?? this.definition.speech?.defaultVoice ?? voices[0]?.id;
    if (chosen === undefined) return 'alloy';
    if (voices.length > 0 && !voices.some((candidate) => candidate.id === chosen)) {
      const { InvalidParameterError } = await import('../../../errors/app-error.js');
      throw new InvalidParameterError(
        'voice_id',
        `Model '${this.definition.name}' has no voice '${chosen}'. GET /v1/speech/voices lists them.`,
      );
    }
    return chosen;
  }

  async synthesize(request: SynthesisRequest): Promise<Pcm> {
    const voice = await this.resolveVoice(request.voice);
    const bytes = await callSpeechApi(
      this.definition,
      () => ({
        url: `${baseUrlOf(this.definition, 'https://api.openai.com/v1')}/audio/speech`,
        init: {
          method: 'POST',
          headers: {
            ...authorizationOf(this.definition, this.secrets, 'Bearer'),
            'content-type': 'application/json',
          },
          body: JSON.stringify({
            model: this.definition.model,
            input: request.text,
            voice,
            response_format: 'pcm',
            ...(request.speed === undefined ? {} : { speed: request.speed }),
          }),
        },
      }),
      request.signal,
      (response) => response.arrayBuffer(),
    );
    return {
      samples: pcmFromBytes(new Uint8Array(bytes)),
      sampleRate: openAiPcmRate,
    };
  }
}
