// What a WebSocket frame carries, as the channels read it: its bytes, PCM16 samples, and base64
// audio decoded strictly (a typo is an error message, not noise handed to a decoder).
import type { RawData } from 'ws';
import { AppError } from '../../../errors/app-error.js';

/** Bytes of the raw frame as one Buffer. */
export function bytesOf(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}

/** PCM16 little-endian samples (copied: a frame need not be aligned). */
export function pcmOf(bytes: Buffer): Int16Array {
  const samples = new Int16Array(Math.floor(bytes.length / 2));
  for (let index = 0; index < samples.length; index += 1)
    samples[index] = bytes.readInt16LE(index * 2);
  return samples;
}

export function decodeBase64(value: string, param: string): Buffer {
  const compact = value.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(compact) || compact.length % 4 === 1) {
    throw new AppError('invalid_parameter', `'${param}' is not valid base64.`, { param });
  }
  return Buffer.from(compact, 'base64');
}
