// Transcription and synthesis for every caller (HTTP operations and the real-time channels):
// picks the model (by name or provider), decodes, resamples and bounds the audio, calls the
// engine, and encodes what it says in the format asked for.
import type { AppConfig, ModelDefinition } from '../../config/config.js';
import { AppError, InvalidParameterError } from '../../errors/app-error.js';
import type { ModelRegistry, ModelStatus } from '../../models/model-registry.js';
import { noUsage, type CallAttribution } from '../../models/metering.js';
import { mp3SampleRates, sniffFormat, type OutputFormat } from '../../audio/audio-types.js';
import type { AudioPool } from '../../audio/audio-pool.js';
import {
  normaliseLanguageTag,
  type Pcm,
  type Transcription,
} from '../../models/speech/speech-models.js';
import {
  openAiModelNames,
  openAiVoiceNames,
  providerNames,
  type ModelVoices,
  type SynthesizeOutcome,
  type SynthesizeRequest,
  type TranscribeOutcome,
  type TranscribeRequest,
} from './speech-requests.js';
import { meteredCall } from './speech-metering.js';

export {
  openAiModelNames,
  openAiVoiceNames,
  type ModelVoices,
  type SynthesizeOutcome,
  type SynthesizeRequest,
  type TranscribeOutcome,
  type TranscribeRequest,
} from './speech-requests.js';

export class SpeechService {
  constructor(
    private readonly options: {
      models: ModelRegistry;
      pool: AudioPool;
      config: AppConfig['speech'];
    },
  ) {}

  get limits(): AppConfig['speech'] {
    return this.options.config;
  }

  /**
   * Transcription providers with at least one configured model: those with an available model
   * first, then in catalog order. The first is the default.
   */
  providers(): { key: string; name: string; available: boolean }[] {
    const byKey = new Map<string, boolean>();
    for (const status of this.ofKind('transcription')) {
      const key = status.definition.provider;
      byKey.set(key, (byKey.get(key) ?? false) || status.available);
    }
    return [...byKey.entries()]
      .map(([key, available], index) => ({ key, available, index }))
      .sort(
        (first, second) =>
          Number(second.available) - Number(first.available) || first.index - second.index,
      )
      .map(({ key, available }) => ({ key, name: providerNames[key] ?? key, available }));
  }

  /** The transcription model for a request: the named one, else the provider's, else the default. */
  resolveTranscriptionModel(
    model: string | undefined,
    provider: string | undefined,
    param = 'model',
  ): string {
    const registry = this.options.models;
    if (model !== undefined) {
      const name = registry.resolve('transcription', this.aliased('transcription', model), param);
      if (provider !== undefined && registry.definitionOf(name).provider !== provider) {
        throw new InvalidParameterError(
          'provider',
          `Model '${name}' is served by '${registry.definitionOf(name).provider}', not '${provider}'.`,
        );
      }
      return name;
    }
    if (provider !== undefined) {
      const candidates = this.ofKind('transcription').filter(
        (status) => status.definition.provider === provider,
      );
      if (candidates.length === 0) {
        throw new InvalidParameterError(
          'provider',
          `'${provider}' is not a transcription provider here. GET /v1/speech/providers lists them.`,
        );
      }
      return (candidates.find((status) => status.available) ?? candidates[0]!).definition.name;
    }
    const configured = registry.defaultOf('transcription');
    const first = this.providers()[0];
    if (configured !== null && this.options.config.defaultTranscriptionModel !== null)
      return configured;
    if (first !== undefined) return this.resolveTranscriptionModel(undefined, first.key);
    return registry.resolve('transcription', undefined);
  }

  resolveSpeechModel(model: string | undefined, param = 'model'): string {
    return this.options.models.resolve(
      'speech',
      model === undefined ? undefined : this.aliased('speech', model),
      param,
    );
  }

  /**
   * `name` as /v1/audio/* takes it: a model or alias of the catalog as it is; else one of OpenAI's
   * names of the kind stands for the default (undefined), unless `speech.openai_aliases` is off.
   * A catalog model of such a name that cannot answer now (the built-in catalog's `whisper-1` and
   * `tts-1` before OPENAI_API_KEY is set) stands for the default too, rather than answering 503.
   */
  openAiModel(kind: 'transcription' | 'speech', name: string): string | undefined {
    const openAiName = (openAiModelNames[kind] as readonly string[]).includes(name);
    if (!this.options.config.openAiAliases || !openAiName) return name;
    if (this.aliasOwner(kind, name) !== undefined) return name;
    const status = this.options.models.status(name);
    return status !== undefined && status.available ? name : undefined;
  }

  /**
   * The voice /v1/audio/speech speaks `voice` with: the model's own voice of that name, else (one
   * of OpenAI's voice names, with `speech.openai_aliases` on) null, the model's default voice;
   * otherwise 400 naming `param`.
   */
  async openAiVoice(model: string, voice: string, param: string): Promise<string | null> {
    try {
      return await this.checkVoice(model, voice, null, param);
    } catch (error) {
      const alias =
        this.options.config.openAiAliases &&
        (openAiVoiceNames as readonly string[]).includes(voice);
      if (alias && error instanceof AppError && error.code === 'invalid_parameter') return null;
      throw error;
    }
  }

  /** The model whose entry lists `alias` among its `aliases`, if any. */
  private aliasOwner(kind: 'transcription' | 'speech', alias: string): string | undefined {
    return this.ofKind(kind).find((status) => status.definition.speech?.aliases.includes(alias))
      ?.definition.name;
  }

  /** A catalog name as it is; an alias as the name of its model. */
  private aliased(kind: 'transcription' | 'speech', name: string): string {
    if (this.options.models.find(name) !== undefined) return name;
    return this.aliasOwner(kind, name) ?? name;
  }

  async transcribe(request: TranscribeRequest): Promise<TranscribeOutcome> {
    const name = this.resolveTranscriptionModel(request.model, request.provider);
    const model = this.options.models.model('transcription', name);
    const limits = this.options.config;
    if (request.audio.length > limits.maxAudioBytes) {
      throw new AppError(
        'payload_too_large',
        `The audio is ${request.audio.length} bytes; at most ${limits.maxAudioBytes} are accepted.`,
        { param: 'audio' },
      );
    }
    if (request.audio.length === 0) throw new InvalidParameterError('audio', "'audio' is empty.");
    // LINEAR16 with a WAV header (as Google's API allows) is read as the WAV it is.
    const encoding =
      request.encoding === 'linear16' && sniffFormat(request.audio) === 'wav'
        ? null
        : request.encoding;
    const prepared = await this.options.pool.prepare(
      {
        bytes: request.audio,
        format: encoding,
        ...(request.sampleRate === undefined ? {} : { sampleRate: request.sampleRate }),
        ...(request.channels === undefined ? {} : { channels: request.channels }),
        targetRate: model.sampleRate,
        maxSeconds: limits.maxAudioSeconds,
      },
      request.signal,
    );
    if (prepared.durationSeconds > limits.maxAudioSeconds) {
      throw new InvalidParameterError(
        'audio',
        `The audio lasts ${prepared.durationSeconds.toFixed(1)} s; at most ${limits.maxAudioSeconds} s are accepted.`,
      );
    }
    const language = request.language === null ? null : normaliseLanguageTag(request.language);
    const result = await this.transcribePcm(
      name,
      prepared,
      language,
      request.signal,
      request.attribution,
    );
    return { ...result, durationSeconds: prepared.durationSeconds };
  }

  /** Transcribes PCM already at the model's rate (the real-time channels resample as they go). */
  async transcribePcm(
    name: string,
    audio: Pcm,
    language: string | null,
    signal: AbortSignal,
    attribution?: CallAttribution,
  ): Promise<Transcription & { model: ModelDefinition }> {
    const definition = this.options.models.definitionOf(name);
    const model = this.options.models.model('transcription', name);
    const audioMs = (audio.samples.length / audio.sampleRate) * 1000;
    // Silence is an empty transcription, not a question for the engine.
    const result = isSilent(audio.samples)
      ? { text: '', language, confidence: 1 }
      : await meteredCall(
          this.options.models.usageMeter,
          definition,
          attribution,
          { ...noUsage, audioMs },
          () => model.transcribe({ audio, language, signal }),
        );
    return {
      ...result,
      // An engine's score may be NaN (no words to average): the response says null instead.
      confidence:
        result.confidence !== null && Number.isFinite(result.confidence)
          ? Math.min(1, Math.max(0, result.confidence))
          : null,
      language:
        result.language === null
          ? (language?.split('-')[0] ?? null)
          : normaliseLanguageTag(result.language).split('-')[0]!,
      model: definition,
    };
  }

  async synthesize(request: SynthesizeRequest): Promise<SynthesizeOutcome> {
    const name = this.resolveSpeechModel(request.model);
    const definition = this.options.models.definitionOf(name);
    const model = this.options.models.model('speech', name);
    if (request.text.length > this.options.config.maxSynthesisCharacters) {
      throw new InvalidParameterError(
        'text',
        `'text' has ${request.text.length} characters; at most ${this.options.config.maxSynthesisCharacters} are synthesised at once.`,
      );
    }
    if (
      request.format === 'mp3' &&
      request.sampleRate !== undefined &&
      !mp3SampleRates.includes(request.sampleRate)
    ) {
      throw new InvalidParameterError(
        'sample_rate',
        `MP3 takes ${mp3SampleRates.join(', ')} Hz; use format 'wav' or 'pcm' for ${request.sampleRate} Hz.`,
      );
    }
    const speed = request.speed ?? 1;
    if (speed !== 1) checkSpeed(name, model.speeds, speed, request.speedParam ?? 'speed');
    const language = request.language === null ? null : normaliseLanguageTag(request.language);
    const voice = await model.resolveVoice(request.voice, language);
    const characters = { ...noUsage, characters: request.text.length };
    const pcm = await meteredCall(
      this.options.models.usageMeter,
      definition,
      request.attribution,
      characters,
      () =>
        model.synthesize({
          text: request.text,
          voice,
          language,
          ...(speed === 1 ? {} : { speed }),
          signal: request.signal,
        }),
    );
    const sampleRate = request.sampleRate ?? pcm.sampleRate;
    const audio = await this.options.pool.render(
      {
        samples: pcm.samples,
        sampleRate: pcm.sampleRate,
        targetRate: sampleRate,
        format: request.format,
      },
      request.signal,
    );
    return {
      audio,
      format: request.format,
      sampleRate,
      durationSeconds: pcm.samples.length / pcm.sampleRate,
      model: definition,
      voice,
    };
  }

  /** Encodes PCM for a client (the real-time channels' audio_response). */
  render(
    pcm: Pcm,
    format: OutputFormat,
    sampleRate: number,
    signal?: AbortSignal,
  ): Promise<Uint8Array> {
    return this.options.pool.render(
      { samples: pcm.samples, sampleRate: pcm.sampleRate, targetRate: sampleRate, format },
      signal,
    );
  }

  /** Voices of every speech model (or of one), unavailable models with none. */
  async voices(model: string | undefined): Promise<ModelVoices[]> {
    const statuses =
      model === undefined
        ? this.ofKind('speech')
        : [this.options.models.status(this.resolveSpeechModel(model))!];
    return Promise.all(
      statuses.map(async (status) => ({
        model: status.definition,
        available: status.available,
        voices: status.available
          ? await this.options.models.model('speech', status.definition.name).voices()
          : (status.definition.speech?.voices ?? []),
      })),
    );
  }

  /** Fails (400 naming `param`) when the model cannot speak with the voice; returns the voice. */
  async checkVoice(
    model: string,
    voice: string | null,
    language: string | null,
    param = 'voice_id',
  ): Promise<string> {
    try {
      return await this.options.models.model('speech', model).resolveVoice(voice, language);
    } catch (error) {
      if (error instanceof AppError && error.param === 'voice_id') {
        throw new AppError(error.code, error.message, { param });
      }
      throw error;
    }
  }

  /**
   * Whether voice chat can run: at least one available recogniser and one available synthesiser;
   * otherwise which is missing and how to get one.
   */
  voiceChatReadiness(): { ready: boolean; reason: string | null } {
    const missing: string[] = [];
    for (const [kind, label, example] of [
      ['transcription', 'a speech recogniser', 'type: transcription, provider: pocketsphinx'],
      ['speech', 'a speech synthesiser', 'type: speech, provider: espeak-ng'],
    ] as const) {
      const models = this.ofKind(kind);
      if (models.some((status) => status.available)) continue;
      const first = models[0];
      missing.push(
        first === undefined
          ? `${label}, and the configuration has none (add a model with ${example} under 'models', or remove speech.builtin_engines: false)`
          : `${label} that can run, and ${first.definition.name} cannot: ${(first.reason ?? 'it is unavailable').replace(/\.$/, '')}`,
      );
    }
    return missing.length === 0
      ? { ready: true, reason: null }
      : { ready: false, reason: `Voice chat needs ${missing.join('; it also needs ')}.` };
  }

  private ofKind(kind: 'transcription' | 'speech'): ModelStatus[] {
    return this.options.models.list().filter((status) => status.definition.type === kind);
  }
}

/** A speed the model cannot speak at is a 400 that says which it can. */
function checkSpeed(
  model: string,
  speeds: { min: number; max: number } | undefined,
  speed: number,
  param: string,
): void {
  if (speeds !== undefined && speed >= speeds.min && speed <= speeds.max) return;
  throw new InvalidParameterError(
    param,
    speeds === undefined
      ? `Model '${model}' speaks at one speed only: '${param}' must be 1.`
      : `Model '${model}' speaks at ${Math.ceil(speeds.min * 100) / 100} to ${Math.floor(speeds.max * 100) / 100} times its normal speed; '${param}' is ${speed}.`,
  );
}

/** Whether the loudest sample is below about -60 dBFS. */
function isSilent(samples: Int16Array): boolean {
  for (let index = 0; index < samples.length; index += 1) {
    if (Math.abs(samples[index]!) > 32) return false;
  }
  return true;
}
