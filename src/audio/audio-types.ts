// What the audio codecs exchange: decoded audio per channel, and the error a bad file raises.

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
