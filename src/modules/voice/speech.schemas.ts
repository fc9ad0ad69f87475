// Schemas shared by the speech and voice routes: safe text, language tags, audio formats.
import Type from 'typebox';

/**
 * Text that can be stored on both dialects: no NUL character and no lone surrogate (with the `u`
 * flag a surrogate pair is one code point, so only unpaired halves fall in the excluded range).
 */
export const SafeText = (options: {
  minLength?: number;
  maxLength: number;
  description?: string;
}) => Type.String({ ...options, pattern: '^[^\\u0000\\uD800-\\uDFFF]*$' });

export const LanguageCode = (description: string) =>
  Type.String({
    pattern: '^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8}){0,3}$',
    maxLength: 35,
    description,
  });

export const encodings = ['LINEAR16', 'WAV', 'MP3', 'OGG_OPUS', 'FLAC', 'WEBM_OPUS'] as const;

export const encodingFormats = {
  LINEAR16: 'linear16',
  WAV: 'wav',
  MP3: 'mp3',
  OGG_OPUS: 'ogg',
  FLAC: 'flac',
  WEBM_OPUS: 'webm',
} as const;

export const OutputFormatSchema = Type.Union(
  [Type.Literal('mp3'), Type.Literal('wav'), Type.Literal('pcm')],
  {
    description:
      '`mp3` (MPEG-1/2 layer III, 64 kbit/s mono), `wav` (16-bit PCM WAV) or `pcm` (raw 16-bit little-endian mono samples, no header).',
  },
);

export const SampleRateSchema = (description: string) =>
  Type.Integer({ minimum: 8000, maximum: 48_000, description });
