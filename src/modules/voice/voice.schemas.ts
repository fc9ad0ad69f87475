// The voice-session request and answer (POST /v1/voice/sessions).
import Type from 'typebox';
import {
  commonParameters,
  ModelNameSchema,
  ObjectIdSchema,
  UserIdSchema,
} from '../../http/schemas/common.js';
import { LanguageCode, OutputFormatSchema } from './speech.schemas.js';
import { streamSampleRates } from './voice-session-service.js';

export const CreateVoiceSessionBody = Type.Object(
  {
    ...commonParameters(),
    user_id: UserIdSchema('Whose conversation it is.'),
    model: Type.Optional(ModelNameSchema('The chat model; default: the default model.')),
    conversation_id: Type.Optional(
      ObjectIdSchema('Continue this conversation; omitted, the first turn creates one.'),
    ),
    stt_model: Type.Optional(
      ModelNameSchema('The transcription model; default: the first provider’s.'),
    ),
    tts_model: Type.Optional(
      ModelNameSchema('The speech model; default: the first available one.'),
    ),
    voice_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 128,
        description: 'Default: the model’s voice for language_code.',
      }),
    ),
    language_code: Type.Optional(LanguageCode('The spoken language (`en-US`).')),
    sample_rate: Type.Optional(
      Type.Integer({
        enum: streamSampleRates,
        description: 'Rate of the PCM16 the client streams (default 16000).',
      }),
    ),
    audio_format: Type.Optional(OutputFormatSchema),
  },
  { additionalProperties: false },
);

export const VoiceSessionCreatedSchema = Type.Object({
  session_id: Type.String({ description: '`vs_…`' }),
  token: Type.String({ description: 'Single-use credential of the WebSocket.' }),
  websocket_url: Type.String({
    description: '`ws://HOST:PORT/v1/voice/stream/<session_id>`',
  }),
  expires_at: Type.String({ format: 'date-time' }),
  token_expires_at: Type.String({ format: 'date-time' }),
  model: Type.String(),
  stt_model: Type.String(),
  tts_model: Type.String(),
  voice_id: Type.String(),
  sample_rate: Type.Integer(),
  audio_format: Type.String(),
});
