// Speech operations: the transcription providers (op 11), transcription (op 12), synthesis (op 13)
// and the voices of each speech model, as one Fastify plugin over the speech service.
import Type from 'typebox';
import { access } from '../../auth/scopes.js';
import { InvalidParameterError } from '../../errors/app-error.js';
import { commonParameters, ModelNameSchema } from '../../http/schemas/common.js';
import {
  encodingFormats,
  encodings,
  LanguageCode,
  OutputFormatSchema,
  SafeText,
  SampleRateSchema,
} from './speech.schemas.js';
import { clientGoneSignal } from '../../http/streaming.js';
import { attributionOf } from '../../http/types.js';
import { featurePlugin, type FeatureApp, type FeaturePlugin } from '../../http/feature-plugin.js';
import type { SpeechService } from './speech-service.js';

const base64Pattern = /^[A-Za-z0-9+/]*={0,2}$/;

/** Decodes base64 strictly: a typo must be a 400, not noise handed to a decoder. */
export function decodeBase64(value: string, param: string): Uint8Array {
  const compact = value.replace(/\s+/g, '');
  if (compact.length % 4 === 1 || !base64Pattern.test(compact)) {
    throw new InvalidParameterError(param, `'${param}' is not valid base64.`);
  }
  return Buffer.from(compact, 'base64');
}

const TranscribeBodySchema = (maxBase64: number) =>
  Type.Object(
    {
      ...commonParameters(),
      audio: Type.String({
        minLength: 1,
        maxLength: maxBase64,
        description:
          'The audio, base64-encoded: a WAV, MP3, Ogg/Opus, FLAC or WebM/Opus file, or raw LINEAR16 samples.',
      }),
      config: Type.Optional(
        Type.Object(
          {
            encoding: Type.Optional(
              Type.Union(
                encodings.map((encoding) => Type.Literal(encoding)),
                {
                  description:
                    '`LINEAR16`: raw 16-bit little-endian PCM (with `sample_rate` and `channels`; a WAV header is also accepted). The others name a file format; omitted, the format is recognised from the bytes.',
                },
              ),
            ),
            sample_rate: Type.Optional(
              SampleRateSchema('Samples per second of LINEAR16 audio (default 16000).'),
            ),
            channels: Type.Optional(
              Type.Integer({
                minimum: 1,
                maximum: 8,
                description: 'LINEAR16 channels (default 1).',
              }),
            ),
            language_code: Type.Optional(
              LanguageCode(
                'The spoken language (`en-US`); omitted, engines that can detect it do.',
              ),
            ),
          },
          { additionalProperties: false },
        ),
      ),
      model: Type.Optional(
        ModelNameSchema(
          'A transcription model (GET /v1/models, type `transcription`); default: the provider’s first available one.',
        ),
      ),
      provider: Type.Optional(
        Type.String({
          maxLength: 64,
          description: 'A key of GET /v1/speech/providers; default: the first one.',
        }),
      ),
    },
    { additionalProperties: false },
  );

const TranscriptionSchema = Type.Object({
  text: Type.String({ description: 'What was said; empty for silence.' }),
  detected_language: Type.Union([Type.String(), Type.Null()], {
    description: 'Short language code (`en`) the engine detected, or the one it was told.',
  }),
  confidence: Type.Union([Type.Number({ minimum: 0, maximum: 1 }), Type.Null()], {
    description:
      'The engine’s own confidence (mean word posterior for PocketSphinx, token probability for sherpa-onnx and Whisper APIs, Deepgram’s confidence); null when the engine reports none.',
  }),
  model: Type.String(),
  provider: Type.String({ description: 'The key of the provider that transcribed.' }),
  duration_seconds: Type.Number(),
});

const SynthesizeBodySchema = (maxCharacters: number) =>
  Type.Object(
    {
      ...commonParameters(),
      text: SafeText({ minLength: 1, maxLength: maxCharacters, description: 'What to say.' }),
      voice_id: Type.Optional(
        Type.String({
          minLength: 1,
          maxLength: 128,
          description:
            'A voice of the model (GET /v1/speech/voices); default: the model’s voice for `language_code`, else its default voice.',
        }),
      ),
      language_code: Type.Optional(LanguageCode('The language of the text (`en-US`).')),
      model: Type.Optional(
        ModelNameSchema('A speech model (type `speech`); default: the first available one.'),
      ),
      format: Type.Optional(OutputFormatSchema),
      sample_rate: Type.Optional(
        SampleRateSchema(
          'Resample the audio to this rate (MP3: 8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100 or 48000); default: the engine’s own.',
        ),
      ),
    },
    { additionalProperties: false },
  );

const SynthesisSchema = Type.Object({
  audio: Type.String({ description: 'The audio, base64-encoded.' }),
  format: Type.String({ description: '`mp3`, `wav` or `pcm`, as asked.' }),
  sample_rate: Type.Integer(),
  duration_seconds: Type.Number(),
  model: Type.String(),
  voice_id: Type.String({ description: 'The voice that spoke.' }),
});

const VoiceSchema = Type.Object({
  id: Type.String({ description: 'The value to pass as `voice_id`.' }),
  name: Type.String(),
  languages: Type.Array(Type.String(), { description: 'BCP 47 tags; empty: any language.' }),
});

/** The speech routes, registered by app.ts like any Fastify plugin. */
export function speechPlugin(speech: SpeechService): FeaturePlugin {
  return featurePlugin('speech', (app) => {
    providerRoutes(app, speech);
    transcribeRoutes(app, speech);
    synthesizeRoutes(app, speech);
    voiceListRoutes(app, speech);
  });
}

function providerRoutes(app: FeatureApp, speech: SpeechService): void {
  app.get(
    '/v1/speech/providers',
    {
      config: { access: access.scopes('voice:read'), feature: 'voice_chat' },
      schema: {
        operationId: 'listSpeechProviders',
        tags: ['Speech'],
        summary: 'List transcription providers',
        description:
          'Providers of the configured transcription models: those with an available model first, then in catalog order. The first is the default of `POST /v1/speech/transcribe`.',
        querystring: Type.Object(commonParameters()),
        response: {
          200: Type.Object({
            providers: Type.Record(Type.String(), Type.String(), {
              description: 'Provider key → display name, in order of preference.',
            }),
            default: Type.Union([Type.String(), Type.Null()]),
            details: Type.Array(
              Type.Object({ key: Type.String(), name: Type.String(), available: Type.Boolean() }),
            ),
          }),
        },
      },
    },
    () => {
      const providers = speech.providers();
      return {
        providers: Object.fromEntries(providers.map((provider) => [provider.key, provider.name])),
        default: providers[0]?.key ?? null,
        details: providers,
      };
    },
  );
}

function transcribeRoutes(app: FeatureApp, speech: SpeechService): void {
  const limits = speech.limits;
  app.post(
    '/v1/speech/transcribe',
    {
      config: { access: access.scopes('voice:read'), feature: 'voice_chat' },
      // Base64 makes audio a third larger; the JSON around it is small.
      bodyLimit: Math.ceil((limits.maxAudioBytes * 4) / 3) + 64 * 1024,
      schema: {
        operationId: 'transcribeSpeech',
        tags: ['Speech'],
        summary: 'Transcribe speech',
        description: `Decodes the audio (WAV, MP3, Ogg/Opus, FLAC, WebM/Opus or raw LINEAR16), resamples it for the engine and transcribes it. At most ${limits.maxAudioBytes} bytes (413) and ${limits.maxAudioSeconds} s (400) of audio. Silence answers an empty \`text\`.`,
        body: TranscribeBodySchema(Math.ceil((limits.maxAudioBytes * 4) / 3) + 8),
        response: { 200: TranscriptionSchema },
      },
    },
    async (request, reply) => {
      const body = request.body;
      const encoding = body.config?.encoding;
      const outcome = await speech.transcribe({
        audio: decodeBase64(body.audio, 'audio'),
        encoding: encoding === undefined ? null : encodingFormats[encoding],
        sampleRate: body.config?.sample_rate,
        channels: body.config?.channels,
        language: body.config?.language_code ?? null,
        model: body.model,
        provider: body.provider,
        signal: clientGoneSignal(reply),
        attribution: attributionOf(request),
      });
      return {
        text: outcome.text,
        detected_language: outcome.language,
        confidence: outcome.confidence,
        model: outcome.model.name,
        provider: outcome.model.provider,
        duration_seconds: Math.round(outcome.durationSeconds * 1000) / 1000,
      };
    },
  );
}

function synthesizeRoutes(app: FeatureApp, speech: SpeechService): void {
  const limits = speech.limits;
  app.post(
    '/v1/speech/synthesize',
    {
      config: { access: access.scopes('voice:write'), feature: 'voice_chat' },
      schema: {
        operationId: 'synthesizeSpeech',
        tags: ['Speech'],
        summary: 'Synthesize speech',
        description: `Speaks \`text\` (at most ${limits.maxSynthesisCharacters} characters) and answers the audio base64-encoded: MP3 by default (encoded on the server), or WAV or raw PCM, at the engine's rate or at \`sample_rate\`.`,
        body: SynthesizeBodySchema(limits.maxSynthesisCharacters),
        response: { 200: SynthesisSchema },
      },
    },
    async (request, reply) => {
      const body = request.body;
      const outcome = await speech.synthesize({
        text: body.text,
        voice: body.voice_id ?? null,
        language: body.language_code ?? null,
        model: body.model,
        format: body.format ?? 'mp3',
        sampleRate: body.sample_rate,
        signal: clientGoneSignal(reply),
        attribution: attributionOf(request),
      });
      return {
        audio: Buffer.from(outcome.audio).toString('base64'),
        format: outcome.format,
        sample_rate: outcome.sampleRate,
        duration_seconds: Math.round(outcome.durationSeconds * 1000) / 1000,
        model: outcome.model.name,
        voice_id: outcome.voice,
      };
    },
  );
}

function voiceListRoutes(app: FeatureApp, speech: SpeechService): void {
  app.get(
    '/v1/speech/voices',
    {
      config: { access: access.scopes('voice:write'), feature: 'voice_chat' },
      schema: {
        operationId: 'listVoices',
        tags: ['Speech'],
        summary: 'List voices',
        description:
          'The voices of each speech model with their languages (`model` narrows it to one). An unavailable model lists only the voices its configuration names.',
        querystring: Type.Object({
          ...commonParameters(),
          model: Type.Optional(ModelNameSchema('Only this speech model.')),
          language_code: Type.Optional(LanguageCode('Only voices that speak this language.')),
        }),
        response: {
          200: Type.Object({
            models: Type.Array(
              Type.Object({
                model: Type.String(),
                display_name: Type.String(),
                provider: Type.String({ description: 'The connection (espeak-ng, openai, …).' }),
                available: Type.Boolean(),
                default_voice: Type.Union([Type.String(), Type.Null()]),
                voices: Type.Array(VoiceSchema),
              }),
            ),
          }),
        },
      },
    },
    async (request) => {
      const language = request.query.language_code?.toLowerCase().replace('_', '-');
      const entries = await speech.voices(request.query.model);
      return {
        models: entries.map((entry) => ({
          model: entry.model.name,
          display_name: entry.model.displayName,
          provider: entry.model.provider,
          available: entry.available,
          default_voice: entry.model.speech?.defaultVoice ?? null,
          voices: entry.voices
            .filter(
              (voice) =>
                language === undefined ||
                voice.languages.length === 0 ||
                voice.languages.some((tag) => {
                  const lower = tag.toLowerCase();
                  return (
                    lower === language ||
                    lower === language.split('-')[0] ||
                    language === lower.split('-')[0]
                  );
                }),
            )
            .map((voice) => ({ id: voice.id, name: voice.name, languages: [...voice.languages] })),
        })),
      };
    },
  );
}
