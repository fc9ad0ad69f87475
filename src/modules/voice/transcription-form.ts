// The form of OpenAI's POST /v1/audio/transcriptions, read as OpenAI's API takes it: which fields
// it knows, what each may hold, and the transcription it asks for. Each refusal is a 400 naming
// the field.
import { InvalidParameterError, MissingParameterError } from '../../errors/app-error.js';
import {
  timestampGranularities,
  transcriptFormats,
  type TimestampGranularity,
  type TranscriptFormat,
} from './openai-audio-formats.js';

/** `prompt`, in characters (Whisper reads its last 224 tokens; this bounds what is sent). */
export const maxPromptCharacters = 4096;
export const languagePattern = /^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8}){0,3}$/;

/** A multipart upload as read: its one file part, and each text field's values in order. */
export interface TranscriptionUpload {
  readonly file: { bytes: Uint8Array; filename: string } | null;
  readonly fields: ReadonlyMap<string, readonly string[]>;
}

export interface TranscriptionForm {
  file: NonNullable<TranscriptionUpload['file']>;
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

/** A form's fields by name: one value (refused when given twice), or every value of a list. */
interface Fields {
  one(name: string): string | undefined;
  many(name: string): string[];
}

function fieldsOf(upload: TranscriptionUpload): Fields {
  for (const name of upload.fields.keys()) {
    if (!knownFields.has(name)) {
      throw new InvalidParameterError(
        name,
        `Unknown parameter '${name.slice(0, 100)}'. This operation takes file, model, language, prompt, response_format, temperature and timestamp_granularities[].`,
      );
    }
  }
  return {
    one(name) {
      const values = upload.fields.get(name);
      if (values !== undefined && values.length > 1) {
        throw new InvalidParameterError(name, `'${name}' is given more than once.`);
      }
      return values?.[0];
    },
    many: (name) => [...(upload.fields.get(`${name}[]`) ?? []), ...(upload.fields.get(name) ?? [])],
  };
}

/** The model, the language and the prompt (accepted and ignored, but bounded). */
function modelAndLanguage(fields: Fields): { model: string; language: string | undefined } {
  const model = fields.one('model');
  if (model === undefined || model === '') throw new MissingParameterError('model');
  if (model.length > 128) {
    throw new InvalidParameterError('model', "'model' is longer than 128 characters.");
  }
  const language = fields.one('language');
  if (language !== undefined && (language.length > 35 || !languagePattern.test(language))) {
    throw new InvalidParameterError(
      'language',
      "'language' must be a language code such as `en` or `en-US`.",
    );
  }
  if ((fields.one('prompt')?.length ?? 0) > maxPromptCharacters) {
    throw new InvalidParameterError(
      'prompt',
      `'prompt' is longer than ${maxPromptCharacters} characters.`,
    );
  }
  return { model, language };
}

function formatOf(fields: Fields): TranscriptFormat {
  const format = fields.one('response_format') ?? 'json';
  if (!(transcriptFormats as readonly string[]).includes(format)) {
    throw new InvalidParameterError(
      'response_format',
      format === 'diarized_json'
        ? "'diarized_json' needs speaker diarization, which no engine here does. Use json, text, srt, vtt or verbose_json."
        : `'response_format' must be one of ${transcriptFormats.join(', ')}.`,
    );
  }
  return format as TranscriptFormat;
}

function temperatureOf(fields: Fields): number {
  const temperatureText = fields.one('temperature');
  const temperature = temperatureText === undefined ? 0 : Number(temperatureText);
  if (
    temperatureText !== undefined &&
    (!/^\s*[0-9.eE+-]+\s*$/.test(temperatureText) || !(temperature >= 0 && temperature <= 1))
  ) {
    throw new InvalidParameterError('temperature', "'temperature' must be a number from 0 to 1.");
  }
  return temperature;
}

function granularitiesOf(fields: Fields, format: TranscriptFormat): TimestampGranularity[] {
  const granularities = [...new Set(fields.many('timestamp_granularities'))];
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
  return granularities as TimestampGranularity[];
}

/** OpenAI's fields that ask for what no engine here does: refused unless they ask for nothing. */
function refuseUnavailable(fields: Fields): void {
  if (fields.many('include').length > 0) {
    throw new InvalidParameterError(
      'include[]',
      "'include[]' (logprobs) is not available: no engine here reports token log probabilities.",
    );
  }
  const stream = fields.one('stream');
  if (stream !== undefined && stream !== 'false') {
    throw new InvalidParameterError(
      'stream',
      "Transcriptions are answered whole here: 'stream' may only be false.",
    );
  }
  const chunking = fields.one('chunking_strategy');
  if (chunking !== undefined && chunking !== 'auto') {
    throw new InvalidParameterError(
      'chunking_strategy',
      "'chunking_strategy' may only be 'auto': the audio is transcribed whole.",
    );
  }
}

/** Checks the form's fields as OpenAI's API takes them; each refusal is a 400 naming the field. */
export function transcriptionForm(upload: TranscriptionUpload): TranscriptionForm {
  const fields = fieldsOf(upload);
  if (upload.file === null) {
    throw new MissingParameterError('file', "'file' is required: the audio, as a file part.");
  }
  const { model, language } = modelAndLanguage(fields);
  const format = formatOf(fields);
  const temperature = temperatureOf(fields);
  const granularities = granularitiesOf(fields, format);
  refuseUnavailable(fields);
  return {
    file: upload.file,
    model,
    language: language ?? null,
    format,
    temperature,
    granularities,
  };
}
