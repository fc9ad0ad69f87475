// Deepgram's API: POST /v1/listen (pre-recorded audio in the body, JSON results with the
// transcript, its confidence and the detected language) and POST /v1/speak (Aura voices, raw
// linear16 PCM back). Authenticated with `Authorization: Token <key>`.
import type { RemoteModelDefinition, SecretSource } from '../../../config/config.js';
import { InvalidParameterError } from '../../../errors/app-error.js';
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

interface ListenResponse {
  results?: {
    channels?: {
      detected_language?: string;
      alternatives?: { transcript?: string; confidence?: number }[];
    }[];
  };
}

export class DeepgramTranscriptionModel implements TranscriptionModel {
  readonly sampleRate = 16_000;

  constructor(
    private readonly definition: RemoteModelDefinition,
    private readonly secrets: SecretSource,
  ) {}

  async transcribe(request: TranscriptionRequest): Promise<Transcription> {
    const query = new URLSearchParams({ model: this.definition.model, smart_format: 'true' });
    if (request.language === null) query.set('detect_language', 'true');
    else query.set('language', request.language);
    const wav = wavFile(request.audio.samples, request.audio.sampleRate);
    const body = await callSpeechApi(
      this.definition,
      () => ({
        url: `${baseUrlOf(this.definition, 'https://api.deepgram.com')}/v1/listen?${query.toString()}`,
        init: {
          method: 'POST',
          headers: {
            ...authorizationOf(this.definition, this.secrets, 'Token'),
            'content-type': 'audio/wav',
          },
          body: wav,
        },
      }),
      request.signal,
      (response) => jsonOf<ListenResponse>(this.definition, response),
    );
    const channel = body.results?.channels?.[0];
    const best = channel?.alternatives?.[0];
    if (best === undefined || typeof best.transcript !== 'string') {
      throw new UpstreamError(
        'upstream_error',
        `The provider of model '${this.definition.name}' sent results without a transcript.`,
      );
    }
    return {
      text: best.transcript.trim(),
      language: channel?.detected_language ?? request.language,
      confidence: typeof best.confidence === 'number' ? best.confidence : null,
    };
  }
}

/** The rate asked of /v1/speak (linear16, no container). */
const speakRate = 24_000;

export class DeepgramSpeechModel implements SpeechModel {
  constructor(
    private readonly definition: RemoteModelDefinition,
    private readonly secrets: SecretSource,
  ) {}

  voices(): Promise<readonly Voice[]> {
    return Promise.resolve(this.definition.speech?.voices ?? []);
  }

  async resolveVoice(voice: string | null, language: string | null): Promise<string> {
    const voices = await this.voices();
    if (voice !== null) {
      if (voices.length > 0 && !voices.some((candidate) => candidate.id === voice)) {
        throw new InvalidParameterError(
          'voice_id',
          `Model '${this.definition.name}' has no voice '${voice}'. GET /v1/speech/voices lists them.`,
        );
      }
      return voice;
    }
    const primary = language?.split('-')[0];
    const byLanguage = voices.find((candidate) =>
      candidate.languages.some((tag) => tag.split('-')[0] === primary),
    );
    return (
      byLanguage?.id ??
      this.definition.speech?.defaultVoice ??
      voices[0]?.id ??
      this.definition.model
    );
  }

  async synthesize(request: SynthesisRequest): Promise<Pcm> {
    const voice = await this.resolveVoice(request.voice, request.language);
    const query = new URLSearchParams({
      model: voice,
      encoding: 'linear16',
      sample_rate: String(speakRate),
      container: 'none',
    });
    const bytes = await callSpeechApi(
      this.definition,
      () => ({
        url: `${baseUrlOf(this.definition, 'https://api.deepgram.com')}/v1/speak?${query.toString()}`,
        init: {
          method: 'POST',
          headers: {
            ...authorizationOf(this.definition, this.secrets, 'Token'),
            'content-type': 'application/json',
          },
          body: JSON.stringify({ text: request.text }),
        },
      }),
      request.signal,
      (response) => response.arrayBuffer(),
    );
    return {
      samples: pcmFromBytes(new Uint8Array(bytes)),
      sampleRate: speakRate,
    };
  }
}
