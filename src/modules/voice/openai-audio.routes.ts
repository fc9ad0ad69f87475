// OpenAI's audio endpoints over the catalog's speech models: POST /v1/audio/transcriptions
// (multipart/form-data, answered as json, text, srt, vtt or verbose_json) and POST /v1/audio/speech
// (JSON in, the audio's bytes out), so that OpenAI's clients speak to the platform unchanged. Both
// run through the speech service, as /v1/speech does: the same decoding path and its bounds, the
// same scopes, feature switch and rate limits. OpenAI's model and voice names stand for the
// catalog's defaults (speech.openai_aliases); docs/speech-and-voice.md says what each field does.
import fastifyMultipart from '@fastify/multipart';
import Type from 'typebox';
import { access } from '../../auth/scopes.js';
import { AppError, InvalidParameterError, MissingParameterError } from '../../errors/app-error.js';
import { featurePlugin, type FeatureApp, type FeaturePlugin } from '../../http/feature-plugin.js';
import { commonParameters, ModelNameSchema } from '../../http/schemas/common.js';
import {
  busboyLimits,
  readUpload,
  type Upload,
  type UploadLimits,
} from '../../http/multipart-upload.js';
import { clientGoneSignal } from '../../http/streaming.js';
import {
  encodedSpeechFormats,
  renderTranscript,
  speechContentTypes,
  speechFormats,
  speechSampleRate,
  timestampGranularities,
  transcriptFormats,
  type TimestampGranularity,
  type TranscriptFormat,
} from './openai-audio-formats.js';
import { SafeText } from './speech.schemas.js';
import { openAiModelNames, openAiVoiceNames, type SpeechService } from './speech-service.js';

/** OpenAI's limit on `input`, and on `instructions`. */
const maxSpeechInput = 4096;
/** `prompt`, in characters (Whisper reads its last 224 tokens; this bounds what is sent). */
const maxPromptCharacters = 4096;
const languagePattern = /^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8}){0,3}$/;

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

/** The form's fields (what OpenAPI shows; the handler reads and checks them itself). */
const TranscriptionFormSchema = (maxFileBytes: number) =>
  Type.Object(
    {
      file: Type.String({
        format: 'binary',
        description: `The audio file: WAV, MP3, Ogg/Opus, FLAC or WebM/Opus (recognised from its bytes, whatever its name), at most ${maxFileBytes} bytes (413).`,
      }),
      model: ModelNameSchema(
        `A transcription model of the catalog (or an alias of one); OpenAI's names (${openAiModelNames.transcription.map((name) => `\`${name}\``).join(', ')}) stand for the default transcription model unless the catalog has a model or alias of that name.`,
      ),
      language: Type.Optional(
        Type.String({
          maxLength: 35,
          pattern: languagePattern.source,
          description: 'The spoken language, ISO-639-1 (`en`) or BCP 47 (`en-US`).',
        }),
      ),
      prompt: Type.Optional(
        Type.String({
          maxLength: maxPromptCharacters,
          description: 'Accepted and ignored: no engine here takes a prompt.',
        }),
      ),
      response_format: Type.Optional(
        Type.Union(
          transcriptFormats.map((format) => Type.Literal(format)),
          { default: 'json' },
        ),
      ),
      temperature: Type.Optional(
        Type.Number({
          minimum: 0,
          maximum: 1,
          description:
            'Accepted and echoed in verbose_json segments; the engines here decode greedily.',
        }),
      ),
      'timestamp_granularities[]': Type.Optional(
        Type.Array(
          Type.Union(timestampGranularities.map((granularity) => Type.Literal(granularity))),
          {
            maxItems: 2,
            description:
              '`segment` (the default) and/or `word`, with `response_format: verbose_json`. PocketSphinx times each utterance and word; other engines give one segment for the whole audio and no word times (an empty `words`).',
          },
        ),
      ),
      stream: Type.Optional(
        Type.Literal('false', { description: 'The transcription is answered whole.' }),
      ),
      chunking_strategy: Type.Optional(
        Type.Literal('auto', { description: 'The audio is transcribed whole either way.' }),
      ),
      user_id: Type.Optional(Type.String({ maxLength: 256, description: 'Accepted and ignored.' })),
      conversation_id: Type.Optional(
        Type.String({ maxLength: 100, description: 'Accepted and ignored.' }),
      ),
    },
    { additionalProperties: false },
  );

const SegmentSchema = Type.Object({
  id: Type.Integer(),
  seek: Type.Integer(),
  start: Type.Number(),
  end: Type.Number(),
  text: Type.String(),
  tokens: Type.Array(Type.Integer(), { description: 'Always empty: no engine here has tokens.' }),
  temperature: Type.Number(),
  avg_logprob: Type.Number({ description: 'The log of the engine’s own confidence.' }),
  compression_ratio: Type.Number(),
  no_speech_prob: Type.Number(),
});

/** `json` and `verbose_json` in one schema (the serializer needs one for application/json). */
const TranscriptionJsonSchema = Type.Object(
  {
    text: Type.String(),
    task: Type.Optional(Type.String({ description: 'verbose_json: `transcribe`.' })),
    language: Type.Optional(
      Type.String({ description: 'verbose_json: the language’s English name (`english`).' }),
    ),
    duration: Type.Optional(Type.Number({ description: 'verbose_json: seconds of audio.' })),
    segments: Type.Optional(Type.Array(SegmentSchema)),
    words: Type.Optional(
      Type.Array(Type.Object({ word: Type.String(), start: Type.Number(), end: Type.Number() })),
    ),
    usage: Type.Object({
      type: Type.Literal('duration'),
      seconds: Type.Number({ description: 'The audio’s duration, rounded up.' }),
    }),
  },
  {
    description:
      'OpenAI’s CreateTranscriptionResponseJson (`json`) or CreateTranscriptionResponseVerboseJson (`verbose_json`).',
  },
);

interface TranscriptionForm {
  file: NonNullable<Upload['file']>;
  model: string;
  language: string | null;
  format: TranscriptFormat;
  temperature: number;
  granularities: TimestampGranularity[];
}

const knownFields = new Set([
  'model',
  'language',
  'prompt',
  'response_format',
  'temperature',
  'timestamp_granularities[]',
  'timestamp_granularities',
  'include[]',
  'include',
  'stream',
  'chunking_strategy',
  'user_id',
  'conversation_id',
]);

/** Checks the form's fields as OpenAI's API takes them; each refusal is a 400 naming the field. */
function transcriptionForm(upload: Upload): TranscriptionForm {
  for (const name of upload.fields.keys()) {
    if (!knownFields.has(name)) {
      throw new InvalidParameterError(
        name,
        `Unknown parameter '${name.slice(0, 100)}'. This operation takes file, model, language, prompt, response_format, temperature and timestamp_granularities[].`,
      );
    }
  }
  const one = (name: string): string | undefined => {
    const values = upload.fields.get(name);
    if (values !== undefined && values.length > 1) {
      throw new InvalidParameterError(name, `'${name}' is given more than once.`);
    }
    return values?.[0];
  };
  const many = (name: string) => [
    ...(upload.fields.get(`${name}[]`) ?? []),
    ...(upload.fields.get(name) ?? []),
  ];
  if (upload.file === null) {
    throw new MissingParameterError('file', "'file' is required: the audio, as a file part.");
  }
  const model = one('model');
  if (model === undefined || model === '') throw new MissingParameterError('model');
  if (model.length > 128) {
    throw new InvalidParameterError('model', "'model' is longer than 128 characters.");
  }
  const language = one('language');
  if (language !== undefined && (language.length > 35 || !languagePattern.test(language))) {
    throw new InvalidParameterError(
      'language',
      "'language' must be a language code such as `en` or `en-US`.",
    );
  }
  if ((one('prompt')?.length ?? 0) > maxPromptCharacters) {
    throw new InvalidParameterError(
      'prompt',
      `'prompt' is longer than ${maxPromptCharacters} characters.`,
    );
  }
  const format = one('response_format') ?? 'json';
  if (!(transcriptFormats as readonly string[]).includes(format)) {
    throw new InvalidParameterError(
      'response_format',
      format === 'diarized_json'
        ? "'diarized_json' needs speaker diarization, which no engine here does. Use json, text, srt, vtt or verbose_json."
        : `'response_format' must be one of ${transcriptFormats.join(', ')}.`,
    );
  }
  const temperatureText = one('temperature');
  const temperature = temperatureText === undefined ? 0 : Number(temperatureText);
  if (
    temperatureText !== undefined &&
    (!/^\s*[0-9.eE+-]+\s*$/.test(temperatureText) || !(temperature >= 0 && temperature <= 1))
  ) {
    throw new InvalidParameterError('temperature', "'temperature' must be a number from 0 to 1.");
  }
  const granularities = [...new Set(many('timestamp_granularities'))];
  for (const granularity of granularities) {
    if (!(timestampGranularities as readonly string[]).includes(granularity)) {
      throw new InvalidParameterError(
        'timestamp_granularities[]',
        "'timestamp_granularities[]' takes `word` and `segment`.",
      );
    }
  }
  if (granularities.length > 0 && format !== 'verbose_json') {
    throw new InvalidParameterError(
      'timestamp_granularities[]',
      "'timestamp_granularities[]' needs response_format 'verbose_json'.",
    );
  }
  if (many('include').length > 0) {
    throw new InvalidParameterError(
      'include[]',
      "'include[]' (logprobs) is not available: no engine here reports token log probabilities.",
    );
  }
  const stream = one('stream');
  if (stream !== undefined && stream !== 'false') {
    throw new InvalidParameterError(
      'stream',
      "Transcriptions are answered whole here: 'stream' may only be false.",
    );
  }
  const chunking = one('chunking_strategy');
  if (chunking !== undefined && chunking !== 'auto') {
    throw new InvalidParameterError(
      'chunking_strategy',
      "'chunking_strategy' may only be 'auto': the audio is transcribed whole.",
    );
  }
  return {
    file: upload.file,
    model,
    language: language ?? null,
    format: format as TranscriptFormat,
    temperature,
    granularities: granularities as TimestampGranularity[],
  };
}

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

const SpeechBodySchema = (maxInput: number) =>
  Type.Object(
    {
      ...commonParameters(),
      model: ModelNameSchema(
        `A speech model of the catalog (or an alias of one); OpenAI's names (${openAiModelNames.speech.map((name) => `\`${name}\``).join(', ')}) stand for the default speech model unless the catalog has a model or alias of that name.`,
      ),
      input: SafeText({
        minLength: 1,
        maxLength: maxInput,
        description: `What to say, at most ${maxInput} characters.`,
      }),
      voice: Type.Union(
        [
          Type.String({ minLength: 1, maxLength: 128 }),
          Type.Object(
            { id: Type.String({ minLength: 1, maxLength: 128 }) },
            { additionalProperties: false },
          ),
        ],
        {
          description: `A voice of the model (GET /v1/speech/voices), as a name or \`{id}\`. OpenAI's voice names (${openAiVoiceNames.join(', ')}) that the model lacks stand for its default voice.`,
        },
      ),
      instructions: Type.Optional(
        SafeText({
          maxLength: maxSpeechInput,
          description: 'Accepted and ignored: no speech model here takes instructions.',
        }),
      ),
      response_format: Type.Optional(
        Type.Union(
          speechFormats.map((format) => Type.Literal(format)),
          {
            default: 'mp3',
            description:
              '`mp3`, `wav` or `pcm` (raw 16-bit little-endian mono samples), all at 24 kHz as OpenAI answers them. `opus`, `aac` and `flac` answer 400: no encoder for them here.',
          },
        ),
      ),
      speed: Type.Optional(
        Type.Number({
          minimum: 0.25,
          maximum: 4,
          default: 1,
          description:
            'How fast to speak, 1 being the voice’s pace: eSpeak NG speaks from 0.46 to 2.57; other speeds answer 400. An OpenAI-compatible server is passed the speed; Deepgram speaks at 1 only.',
        }),
      ),
      stream_format: Type.Optional(
        Type.Union([Type.Literal('audio'), Type.Literal('sse')], {
          description: '`audio` only: the audio file is answered whole.',
        }),
      ),
    },
    { additionalProperties: false },
  );

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
