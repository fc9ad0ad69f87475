// What the audio codecs exchange: the formats (and telling them apart by their first bytes),
// decoded audio per channel, and the error a bad file raises. The main thread imports these names
// from here, not from audio-codecs.ts, which loads the codec packages only the worker threads need.

export const inputFormats = ['linear16', 'wav', 'mp3', 'ogg', 'flac', 'webm'] as const;
export type InputFormat = (typeof inputFormats)[number];

export const outputFormats = ['mp3', 'wav', 'pcm'] as const;
export type OutputFormat = (typeof outputFormats)[number];

/** Sample rates an MP3 can have (MPEG-1, 2 and 2.5 layer III). */
export const mp3SampleRates = [8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000];

/** Decoded audio: one Float32Array per channel. */
export interface DecodedAudio {
  channels: Float32Array[];
  sampleRate: number;
}

/** A decoding failure the client caused (a corrupt or unsupported file). */
export class AudioFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AudioFormatError';
  }
}

export function int16ToFloat(samples: Int16Array): Float32Array {
  const out = new Float32Array(samples.length);
  for (let index = 0; index < samples.length; index += 1) out[index] = samples[index]! / 32768;
  return out;
}

/** The container, read from the first bytes; null when it is none of the supported ones. */
export function sniffFormat(bytes: Uint8Array): Exclude<InputFormat, 'linear16'> | null {
  const ascii = (start: number, end: number) =>
    String.fromCharCode(...bytes.subarray(start, Math.min(end, bytes.length)));
  if (ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WAVE') return 'wav';
  if (ascii(0, 4) === 'OggS') return 'ogg';
  if (ascii(0, 4) === 'fLaC') return 'flac';
  if (bytes[0] === 0x1a && bytes[1] === 0x45 && bytes[2] === 0xdf && bytes[3] === 0xa3) {
    return 'webm';
  }
  if (ascii(0, 3) === 'ID3') return 'mp3';
  // An MPEG audio frame starts with 11 set bits (the frame sync).
  if (bytes[0] === 0xff && bytes[1] !== undefined && (bytes[1] & 0xe0) === 0xe0) return 'mp3';
  return null;
}
