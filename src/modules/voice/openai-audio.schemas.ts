// The schemas of OpenAI's audio endpoints (openai-audio.routes.ts): the transcription form as the
// document shows it, the JSON transcription, and the speech body.
import Type from 'typebox';
import { commonParameters, ModelNameSchema } from '../../http/schemas/common.js';
import {
  speechFormats,
  timestampGranularities,
  transcriptFormats,
} from './openai-audio-formats.js';
import { SafeText } from './speech.schemas.js';
import { openAiModelNames, openAiVoiceNames } from './speech-requests.js';
import { languagePattern, maxPromptCharacters } from './transcription-form.js';

/** OpenAI's limit on `input`, and on `instructions`. */
export const maxSpeechInput = 4096;

/** The form's fields (what OpenAPI shows; the handler reads and checks them itself). */
export const TranscriptionFormSchema = (maxFileBytes: number) =>
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
export const TranscriptionJsonSchema = Type.Object(
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

export const SpeechBodySchema = (maxInput: number) =>
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
