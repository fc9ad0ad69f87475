// The WebSocket message protocol of both channels: every client message's schema (TypeBox, also
// the AsyncAPI document) and its validation into the contract's error object; the close codes
// are close-codes.ts.
import { Ajv } from 'ajv';
import Type, { type Static, type TSchema } from 'typebox';
import { AppError } from '../../../errors/app-error.js';
import { schemaIssueToError, type SchemaIssue } from '../../../errors/schema-errors.js';
import { LanguageCode, OutputFormatSchema, SafeText } from '../speech.schemas.js';

const textMessage = (maxLength: number) =>
  Type.Object(
    {
      type: Type.Literal('text'),
      text: SafeText({ minLength: 1, maxLength, description: 'The user’s message.' }),
    },
    { additionalProperties: false, title: 'text', description: 'A typed user turn.' },
  );

const buildVoiceStreamMessages = (maxText: number) => ({
  audio: Type.Object(
    {
      type: Type.Literal('audio'),
      audio: Type.String({
        minLength: 1,
        description:
          'Base64 PCM16 (little-endian, mono) at the session’s sample_rate — the same bytes a binary frame carries.',
      }),
    },
    { additionalProperties: false, title: 'audio', description: 'A chunk of captured audio.' },
  ),
  text: textMessage(maxText),
});

export const VoiceSettingsSchema = Type.Object(
  {
    enabled: Type.Optional(
      Type.Boolean({ description: 'Answer with audio_response too (needs voice:write).' }),
    ),
    stt_model: Type.Optional(Type.String({ maxLength: 128 })),
    tts_model: Type.Optional(Type.String({ maxLength: 128 })),
    voice_id: Type.Optional(Type.String({ maxLength: 128 })),
    language_code: Type.Optional(LanguageCode('The spoken language (`en-US`).')),
    audio_format: Type.Optional(OutputFormatSchema),
  },
  { additionalProperties: false },
);

const buildGeneralMessages = (maxText: number, maxAudioBase64: number) => ({
  init: Type.Object(
    {
      type: Type.Literal('init'),
      user_id: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
      conversation_id: Type.Optional(
        Type.String({ minLength: 1, maxLength: 100, description: 'Continue this conversation.' }),
      ),
      model: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
      voice: Type.Optional(VoiceSettingsSchema),
    },
    {
      additionalProperties: false,
      title: 'init',
      description: 'Starts (or restarts) the channel’s conversation; answered by `ready`.',
    },
  ),
  text: textMessage(maxText),
  audio: Type.Object(
    {
      type: Type.Literal('audio'),
      audio: Type.String({
        minLength: 1,
        maxLength: maxAudioBase64,
        description: 'Base64 audio: a whole utterance, or one chunk of it.',
      }),
      format: Type.Optional(
        Type.Union(
          ['linear16', 'wav', 'mp3', 'ogg', 'flac', 'webm'].map((format) => Type.Literal(format)),
          { description: 'Default: recognised from the bytes; raw PCM needs `linear16`.' },
        ),
      ),
      sample_rate: Type.Optional(Type.Integer({ minimum: 8000, maximum: 48_000 })),
      final: Type.Optional(
        Type.Boolean({
          description:
            'false: more chunks of this utterance follow; true (default): the utterance is complete.',
        }),
      ),
    },
    {
      additionalProperties: false,
      title: 'audio',
      description: 'User speech to transcribe and answer.',
    },
  ),
});

// Each set of message schemas is built once per process for its limits and shared by every
// connection: Ajv keeps what it compiled keyed by the schema object, so schemas built per
// connection were compiled again and kept for good (15–16 KiB per connection).
const voiceStreamSets = new Map<number, ReturnType<typeof buildVoiceStreamMessages>>();
const generalSets = new Map<string, ReturnType<typeof buildGeneralMessages>>();

/** The voice stream's client messages (one object per `maxText`, shared). */
export function voiceStreamMessages(maxText: number): ReturnType<typeof buildVoiceStreamMessages> {
  let messages = voiceStreamSets.get(maxText);
  if (messages === undefined) {
    messages = buildVoiceStreamMessages(maxText);
    voiceStreamSets.set(maxText, messages);
  }
  return messages;
}

/** The general channel's client messages (one object per pair of limits, shared). */
export function generalMessages(
  maxText: number,
  maxAudioBase64: number,
): ReturnType<typeof buildGeneralMessages> {
  const key = `${maxText}:${maxAudioBase64}`;
  let messages = generalSets.get(key);
  if (messages === undefined) {
    messages = buildGeneralMessages(maxText, maxAudioBase64);
    generalSets.set(key, messages);
  }
  return messages;
}

export type GeneralMessages = ReturnType<typeof generalMessages>;
export type InitMessage = Static<GeneralMessages['init']>;
export type GeneralAudioMessage = Static<GeneralMessages['audio']>;

const ajv = new Ajv({ allErrors: false, strict: false, coerceTypes: false });
const compiled = new WeakMap<TSchema, ReturnType<typeof ajv.compile>>();
let compiledCount = 0;

/** How many message validators this process has compiled (bounded: one per distinct schema). */
export function compiledMessageValidators(): number {
  return compiledCount;
}

/**
 * Parses one text frame against the channel's message schemas: not JSON → `invalid_json`, no or
 * an unknown `type` → `unknown_message_type`, a missing or wrong field → the error naming it.
 */
export function parseMessage<M extends Record<string, TSchema>>(
  raw: string,
  messages: M,
): { [K in keyof M]: { type: K; message: Static<M[K]> } }[keyof M] {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw new AppError('invalid_json', 'The message is not valid JSON.');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new AppError('invalid_parameter', 'A message is a JSON object with a `type`.', {
      param: 'type',
    });
  }
  const type = (value as { type?: unknown }).type;
  if (typeof type !== 'string') {
    throw new AppError('missing_parameter', "'type' is required.", { param: 'type' });
  }
  const schema = Object.hasOwn(messages, type) ? messages[type] : undefined;
  if (schema === undefined) {
    throw new AppError(
      'unknown_message_type',
      `Unknown message type '${type.slice(0, 40)}'; this channel takes ${Object.keys(messages).join(', ')}.`,
      { param: 'type' },
    );
  }
  let validate = compiled.get(schema);
  if (validate === undefined) {
    validate = ajv.compile(schema);
    compiled.set(schema, validate);
    compiledCount += 1;
  }
  if (!validate(value)) {
    throw schemaIssueToError((validate.errors ?? []) as SchemaIssue[], `'${type}' message`);
  }
  return { type, message: value } as never;
}
