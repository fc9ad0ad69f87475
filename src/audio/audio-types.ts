// What the audio codecs exchange: the formats, decoded audio per channel, and the error a bad file
// raises. The main thread imports these names from here, not from audio-codecs.ts, which loads the
// codec packages the worker threads alone need.

export const inputFormats = ['linear16', 'wav', 'mp3', 'ogg', 'flac', 'webm'] as const;
export type InputFormat = (typeof inputFormats)[number];

export const outputFormats = ['mp3', 'wav', 'pcm'] as const;
export type OutputFormat = (typeof outputFormats)[number];

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
