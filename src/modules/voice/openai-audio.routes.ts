// OpenAI's audio endpoints over the catalog's speech models: POST /v1/audio/transcriptions
// (multipart/form-data, answered as json, text, srt, vtt or verbose_json) and POST /v1/audio/speech
// (JSON in, the audio's bytes out), so that OpenAI's clients speak to the platform unchanged. Both
// run through the speech service, as /v1/speech does: the same decoding path and its bounds, the
// same scopes, feature switch and rate limits. OpenAI's model and voice names stand for the
// catalog's defaults (speech.openai_aliases); docs/speech-and-voice.md says what each field does.
import fastifyMultipart from '@fastify/multipart';
import Type from 'typebox';
import { access } from '../../auth/scopes.js';
import { AppError, InvalidParameterError } from '../../errors/app-error.js';
import { featurePlugin, type FeatureApp, type FeaturePlugin } from '../../http/feature-plugin.js';
import { busboyLimits, readUpload, type UploadLimits } from '../../http/multipart-upload.js';
import { clientGoneSignal } from '../../http/streaming.js';
import { attributionOf } from '../../http/types.js';
import {
  encodedSpeechFormats,
  renderTranscript,
  speechContentTypes,
  speechSampleRate,
} from './openai-audio-formats.js';
import {
  maxSpeechInput,
  SpeechBodySchema,
  TranscriptionFormSchema,
  TranscriptionJsonSchema,
} from './openai-audio.schemas.js';
import type { SpeechService } from './speech-service.js';
import { transcriptionForm } from './transcription-form.js';

/** /v1/audio/*, part of the voice module's plugin. */
export function openAiAudioPlugin(speech: SpeechService): FeaturePlugin {
  return featurePlugin('openai-audio', async (app) => {
    speechRoute(app, speech);
    // The multipart parser serves this one route: its own (encapsulated) context, where JSON and
    // every other content type is refused.
    await app.register(async (uploads) => transcriptionRoute(uploads as FeatureApp, speech));
  });
}

// ---------------------------------------------------------------------------------------------
// POST /v1/audio/transcriptions

/** The speech service names the audio `audio`; here it is the form's `file`. */
async function asFile<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof AppError && error.param === 'audio') {
      throw new AppError(error.code, error.message.replaceAll("'audio'", "'file'"), {
        param: 'file',
        details: error.details,
        headers: error.headers,
        cause: error,
      });
    }
    throw error;
  }
}

async function transcriptionRoute(app: FeatureApp, speech: SpeechService): Promise<void> {
  const limits: UploadLimits = {
    // The limit of the JSON transcription route's audio (speech.max_audio_bytes), after decoding.
    maxFileBytes: speech.limits.maxAudioBytes,
    maxFileSetting: 'speech.max_audio_bytes',
    maxFields: 16,
    maxFieldBytes: 16 * 1024,
  };
  // Only multipart/form-data is read here; any other body is refused unread.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, _payload, done) =>
    done(
      new AppError(
        'unsupported_media_type',
        "Send the audio as multipart/form-data (a 'file' part and a 'model' field), as OpenAI's clients do.",
      ),
      undefined,
    ),
  );
  await app.register(fastifyMultipart, { limits: busboyLimits(limits), throwFileSizeLimit: true });
  app.post(
    '/v1/audio/transcriptions',
    {
      config: { access: access.scopes('voice:read'), feature: 'voice_chat' },
      schema: {
        operationId: 'createTranscription',
        tags: ['Speech'],
        summary: 'Transcribe audio (OpenAI’s audio API)',
        description: `OpenAI's \`POST /v1/audio/transcriptions\`: a multipart/form-data upload, transcribed by a transcription model of the catalog like \`POST /v1/speech/transcribe\` (the same decoding and bounds: at most ${limits.maxFileBytes} bytes, 413, and ${speech.limits.maxAudioSeconds} s of audio). Answers \`json\` (\`{text, usage}\`), \`text\`, \`srt\`, \`vtt\` or \`verbose_json\` (language, duration, segments and, asked for, words). Errors have OpenAI's error body.`,
        consumes: ['multipart/form-data'],
        // Documented, not validated: the multipart reader checks the form (see readUpload).
        'x-multipart-body': TranscriptionFormSchema(limits.maxFileBytes),
        response: {
          200: {
            description: 'The transcription, in the asked `response_format`.',
            content: {
              'application/json': { schema: TranscriptionJsonSchema },
              'text/plain': {
                schema: Type.String({ description: '`text` or `srt` (SubRip).' }),
              },
              'text/vtt': { schema: Type.String({ description: '`vtt` (WebVTT).' }) },
            },
          },
        },
      },
    },
    async (request, reply) => {
      if (!request.isMultipart()) {
        throw new AppError(
          'unsupported_media_type',
          "Send the audio as multipart/form-data (a 'file' part and a 'model' field), as OpenAI's clients do.",
        );
      }
      const form = transcriptionForm(await readUpload(request, limits));
      if (form.file.bytes.length === 0) {
        throw new InvalidParameterError('file', "'file' is empty.");
      }
      const outcome = await asFile(() =>
        speech.transcribe({
          audio: form.file.bytes,
          encoding: null,
          sampleRate: undefined,
          channels: undefined,
          language: form.language,
          model: speech.openAiModel('transcription', form.model),
          provider: undefined,
          signal: clientGoneSignal(reply),
          attribution: attributionOf(request),
        }),
      );
      const rendered = renderTranscript(outcome, form.format, {
        temperature: form.temperature,
        granularities: form.granularities,
      });
      return reply.type(rendered.contentType).send(rendered.body);
    },
  );
}

// ---------------------------------------------------------------------------------------------
// POST /v1/audio/speech

function speechRoute(app: FeatureApp, speech: SpeechService): void {
  const maxInput = Math.min(maxSpeechInput, speech.limits.maxSynthesisCharacters);
  const binary = (description: string) => ({
    schema: Type.Unsafe<Buffer>({ type: 'string', format: 'binary', description }),
  });
  const encoded = Object.keys(encodedSpeechFormats).join(', ');
  app.post(
    '/v1/audio/speech',
    {
      config: { access: access.scopes('voice:write'), feature: 'voice_chat' },
      schema: {
        operationId: 'createSpeech',
        tags: ['Speech'],
        summary: 'Speak text (OpenAI’s audio API)',
        description: `OpenAI's \`POST /v1/audio/speech\`: speaks \`input\` with a speech model of the catalog, like \`POST /v1/speech/synthesize\`, and answers the audio's bytes (${encoded}) at 24 kHz, mono. Errors have OpenAI's error body.`,
        body: SpeechBodySchema(maxInput),
        response: {
          200: {
            description: 'The audio.',
            content: {
              'audio/mpeg': binary('`mp3`'),
              'audio/wav': binary('`wav`: 16-bit PCM WAV'),
              'audio/pcm': binary('`pcm`: raw 16-bit little-endian mono samples at 24 kHz'),
            },
          },
        },
      },
    },
    async (request, reply) => {
      const body = request.body;
      const asked = body.response_format ?? 'mp3';
      const format = encodedSpeechFormats[asked];
      if (format === undefined) {
        throw new InvalidParameterError(
          'response_format',
          `'${asked}' cannot be encoded on this server; 'response_format' may be ${encoded}.`,
        );
      }
      if (body.stream_format === 'sse') {
        throw new InvalidParameterError(
          'stream_format',
          "'stream_format' may only be 'audio' here: the audio is answered whole.",
        );
      }
      const model = speech.resolveSpeechModel(speech.openAiModel('speech', body.model));
      const voice = await speech.openAiVoice(
        model,
        typeof body.voice === 'string' ? body.voice : body.voice.id,
        'voice',
      );
      const outcome = await speech.synthesize({
        text: body.input,
        voice,
        language: null,
        model,
        format,
        sampleRate: speechSampleRate,
        ...(body.speed === undefined ? {} : { speed: body.speed }),
        speedParam: 'speed',
        signal: clientGoneSignal(reply),
        attribution: attributionOf(request),
      });
      const audio = Buffer.from(
        outcome.audio.buffer,
        outcome.audio.byteOffset,
        outcome.audio.byteLength,
      );
      return reply.type(speechContentTypes[format]).send(audio);
    },
  );
}
