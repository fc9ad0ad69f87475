// Audio decoding (WAV, MP3, Ogg/Opus, FLAC, WebM/Opus, raw LINEAR16), down-mixing, resampling and
// encoding (MP3, WAV, PCM): CPU-bound, so it runs in the audio worker threads, never on the event
// loop. The codecs are WebAssembly builds of mpg123, libopus, libFLAC, libsamplerate and LAME.
import { createRequire } from 'node:module';
import { Readable } from 'node:stream';
import {
  EbmlStreamDecoder,
  EbmlTagId,
  EbmlTagPosition,
  type Block,
  type EbmlTag,
} from 'ebml-stream';
import type * as SamplerateModule from '@alexanderolsen/libsamplerate-js';
import type { createMp3Encoder as createMp3EncoderType } from 'wasm-media-encoders';
import {
  AudioFormatError,
  int16ToFloat,
  sniffFormat,
  type DecodedAudio,
  type InputFormat,
  type OutputFormat,
} from './audio-types.js';
import {
  checkLength,
  checkShape,
  SampleCollector,
  type DecodedPart,
  type DecodeLimits,
} from './decode-limits.js';
import { parseWav, wavFile } from './wav.js';

const require = createRequire(import.meta.url);

export interface DecodeOptions {
  /** `linear16` needs `sampleRate` and `channels`; other formats carry their own. */
  format: InputFormat | null;
  sampleRate?: number;
  channels?: number;
  limits: DecodeLimits;
}

export async function decodeAudio(
  bytes: Uint8Array,
  options: DecodeOptions,
): Promise<DecodedAudio> {
  const format = options.format === 'linear16' ? 'linear16' : sniffFormat(bytes);
  if (format === null) {
    throw new AudioFormatError(
      `The audio is not ${options.format === null ? 'in a recognised format' : options.format}: expected WAV, MP3, Ogg/Opus, FLAC or WebM/Opus, or raw LINEAR16 with config.encoding.`,
    );
  }
  if (options.format !== null && options.format !== format) {
    throw new AudioFormatError(
      `config.encoding says ${options.format} but the audio is ${format}.`,
    );
  }
  const { limits } = options;
  switch (format) {
    case 'linear16':
      return decodeLinear16(bytes, options.sampleRate ?? 16000, options.channels ?? 1, limits);
    case 'wav':
      return parseWav(bytes, limits);
    case 'mp3':
      return decodeMp3(bytes, limits);
    case 'ogg':
      return decodeOggOpus(bytes, limits);
    case 'flac':
      return decodeFlac(bytes, limits);
    case 'webm':
      return decodeWebm(bytes, limits);
  }
}

function decodeLinear16(
  bytes: Uint8Array,
  sampleRate: number,
  channelCount: number,
  limits: DecodeLimits,
): DecodedAudio {
  checkShape('LINEAR16', sampleRate, channelCount);
  const frameBytes = 2 * channelCount;
  const frames = Math.floor(bytes.length / frameBytes);
  checkLength(limits, frames, sampleRate, channelCount, true);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const channels = Array.from({ length: channelCount }, () => new Float32Array(frames));
  for (let frame = 0; frame < frames; frame += 1) {
    for (let channel = 0; channel < channelCount; channel += 1) {
      channels[channel]![frame] = view.getInt16(frame * frameBytes + channel * 2, true) / 32768;
    }
  }
  return { channels, sampleRate };
}

/**
 * Gathers a decoder's output part by part; each part is checked against the limits before the
 * next is decoded, so a part of a pathological file expands to a bounded amount (tens of MB at
 * most), never to the whole file's worth. A decoder that throws on the input (a WebAssembly trap,
 * a parser's error) met a file it cannot read: a 400, not a 500.
 */
async function collect(
  what: string,
  limits: DecodeLimits,
  parts: AsyncIterable<DecodedPart>,
): Promise<DecodedAudio> {
  const collector = new SampleCollector(what, limits);
  try {
    for await (const part of parts) collector.add(part);
  } catch (error) {
    if (error instanceof AudioFormatError) throw error;
    throw new AudioFormatError(
      `The ${what} audio could not be decoded: the file is corrupt or not ${what}.`,
    );
  }
  return collector.audio();
}

/** A streaming decoder's output, `sliceBytes` of input at a time, then what it holds back. */
async function* inSlices(
  bytes: Uint8Array,
  sliceBytes: number,
  decoder: {
    decode(slice: Uint8Array): DecodedPart | Promise<DecodedPart>;
    flush?(): Promise<DecodedPart>;
  },
): AsyncGenerator<DecodedPart> {
  for (let offset = 0; offset < bytes.length; offset += sliceBytes) {
    yield await decoder.decode(bytes.subarray(offset, offset + sliceBytes));
  }
  if (decoder.flush !== undefined) yield await decoder.flush();
}

// How much input each decoding step takes. The worst expansion per input byte bounds what one
// step can produce: an MP3 frame of ~100 bytes holds at most 2 × 1152 samples (16 KiB: ~1.5 M
// values); a FLAC frame of ~20 bytes may hold 65,535 samples per channel and an Opus packet of
// 1–2 bytes 60 ms, so those take 2 KiB (a few million values) at a time.
const mp3SliceBytes = 16 * 1024;
const packedSliceBytes = 2 * 1024;

async function decodeMp3(bytes: Uint8Array, limits: DecodeLimits): Promise<DecodedAudio> {
  const { MPEGDecoder } = await import('mpg123-decoder');
  const decoder = new MPEGDecoder();
  await decoder.ready;
  try {
    return await collect(
      'MP3',
      limits,
      inSlices(bytes, mp3SliceBytes, { decode: (slice) => decoder.decode(slice) }),
    );
  } finally {
    decoder.free();
  }
}

async function decodeOggOpus(bytes: Uint8Array, limits: DecodeLimits): Promise<DecodedAudio> {
  const { OggOpusDecoder } = await import('ogg-opus-decoder');
  const decoder = new OggOpusDecoder();
  await decoder.ready;
  try {
    return await collect(
      'Ogg/Opus',
      limits,
      inSlices(bytes, packedSliceBytes, {
        decode: (slice) => decoder.decode(slice),
        flush: () => decoder.flush(),
      }),
    );
  } finally {
    decoder.free();
  }
}

async function decodeFlac(bytes: Uint8Array, limits: DecodeLimits): Promise<DecodedAudio> {
  const { FLACDecoder } = await import('@wasm-audio-decoders/flac');
  const decoder = new FLACDecoder();
  await decoder.ready;
  try {
    return await collect(
      'FLAC',
      limits,
      inSlices(bytes, packedSliceBytes, {
        decode: (slice) => decoder.decode(slice),
        flush: () => decoder.flush(),
      }),
    );
  } finally {
    decoder.free();
  }
}

/** WebM/Matroska: the first Opus audio track's blocks, decoded by libopus. */
async function decodeWebm(bytes: Uint8Array, limits: DecodeLimits): Promise<DecodedAudio> {
  const tracks = new Map<number, { codec: string; codecPrivate: Uint8Array | null }>();
  let currentTrack: { number: number; codec: string; codecPrivate: Uint8Array | null } | null =
    null;
  const blocks: Block[] = [];
  const decoder = new EbmlStreamDecoder();
  decoder.on('data', (tag: EbmlTag) => {
    const data = (tag as unknown as { data?: unknown }).data;
    const id = tag.id as EbmlTagId;
    if (id === EbmlTagId.TrackEntry) {
      if (tag.position === EbmlTagPosition.Start) {
        currentTrack = { number: 0, codec: '', codecPrivate: null };
      } else if (currentTrack !== null) {
        tracks.set(currentTrack.number, currentTrack);
        currentTrack = null;
      }
    } else if (id === EbmlTagId.TrackNumber && currentTrack !== null) {
      currentTrack.number = Number(data);
    } else if (id === EbmlTagId.CodecID && currentTrack !== null) {
      currentTrack.codec = String(data);
    } else if (id === EbmlTagId.CodecPrivate && currentTrack !== null) {
      currentTrack.codecPrivate = data as Uint8Array;
    } else if (id === EbmlTagId.SimpleBlock || id === EbmlTagId.Block) {
      blocks.push(tag as unknown as Block);
    }
  });
  try {
    await new Promise<void>((resolve, reject) => {
      decoder.on('end', resolve);
      decoder.on('error', reject);
      Readable.from([Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)]).pipe(decoder);
      decoder.resume();
    });
  } catch {
    throw new AudioFormatError(
      'The WebM audio could not be read: the file is corrupt or not WebM/Matroska.',
    );
  }
  const opus = [...tracks.entries()].find(([, track]) => track.codec === 'A_OPUS');
  if (opus === undefined) {
    const codecs =
      [...tracks.values()]
        .slice(0, 8)
        .map((track) => track.codec.slice(0, 32))
        .join(', ') || 'none';
    throw new AudioFormatError(`The WebM file has no Opus audio track (tracks: ${codecs}).`);
  }
  const [trackNumber, track] = opus;
  // OpusHead: channel count at byte 9, pre-skip (little-endian) at bytes 10–11.
  const head = track.codecPrivate;
  const channels = head !== null && head.length >= 12 ? head[9]! : 1;
  if (channels < 1) throw new AudioFormatError('The WebM Opus track declares 0 channels.');
  const preSkip = head !== null && head.length >= 12 ? head[10]! | (head[11]! << 8) : 0;
  const { OpusDecoder } = await import('opus-decoder');
  const opusDecoder = new OpusDecoder({ channels: Math.min(channels, 2), preSkip });
  await opusDecoder.ready;
  try {
    const frames = blocks
      .filter((block) => block.track === trackNumber)
      .map((block) => new Uint8Array(block.payload));
    // A few hundred packets (seconds of audio) at a time, checked against the limits as they come.
    async function* batches(): AsyncGenerator<DecodedPart> {
      for (let next = 0; next < frames.length; next += 256) {
        yield await Promise.resolve(opusDecoder.decodeFrames(frames.slice(next, next + 256)));
      }
    }
    return await collect('WebM/Opus', limits, batches());
  } finally {
    opusDecoder.free();
  }
}

/** Averages the channels into one. */
export function downmix(audio: DecodedAudio): Float32Array {
  const [first, ...others] = audio.channels;
  if (first === undefined) return new Float32Array(0);
  if (others.length === 0) return first;
  const mono = new Float32Array(first.length);
  const scale = 1 / audio.channels.length;
  for (const channel of audio.channels) {
    for (let index = 0; index < mono.length; index += 1) mono[index]! += channel[index]! * scale;
  }
  return mono;
}

type Samplerate = typeof SamplerateModule;

let samplerate: Samplerate | undefined;

function libsamplerate(): Samplerate {
  samplerate ??= require('@alexanderolsen/libsamplerate-js') as Samplerate;
  return samplerate;
}

/** Band-limited sample-rate conversion (libsamplerate, its fastest sinc converter). */
export async function resample(
  samples: Float32Array,
  from: number,
  to: number,
): Promise<Float32Array> {
  if (from === to || samples.length === 0) return samples;
  const { create, ConverterType } = libsamplerate();
  const converter = await create(1, from, to, { converterType: ConverterType.SRC_SINC_FASTEST });
  try {
    return converter.simple(samples);
  } finally {
    converter.destroy();
  }
}

export function floatToInt16(samples: Float32Array): Int16Array {
  const out = new Int16Array(samples.length);
  for (let index = 0; index < samples.length; index += 1) {
    const value = Math.max(-1, Math.min(1, samples[index]!));
    out[index] = value < 0 ? Math.round(value * 32768) : Math.round(value * 32767);
  }
  return out;
}

type Mp3Encoder = Awaited<ReturnType<typeof createMp3EncoderType>>;

let mp3Encoder: Promise<Mp3Encoder> | undefined;

/** MP3 (LAME, constant 64 kbit/s mono: speech needs no more). */
async function encodeMp3(samples: Float32Array, sampleRate: number): Promise<Uint8Array> {
  mp3Encoder ??= import('wasm-media-encoders').then(({ createMp3Encoder }) => createMp3Encoder());
  const encoder = await mp3Encoder;
  encoder.configure({ sampleRate, channels: 1, bitrate: 64 });
  const parts: Uint8Array[] = [];
  // The encoder's output is a view of its memory, valid until the next call: copy it.
  const block = 16_384;
  for (let offset = 0; offset < samples.length; offset += block) {
    parts.push(encoder.encode([samples.subarray(offset, offset + block)]).slice());
  }
  parts.push(encoder.finalize().slice());
  return Buffer.concat(parts);
}

export async function encodeAudio(
  samples: Int16Array,
  sampleRate: number,
  format: OutputFormat,
): Promise<Uint8Array> {
  switch (format) {
    case 'pcm':
      return new Uint8Array(samples.buffer, samples.byteOffset, samples.byteLength);
    case 'wav':
      return wavFile(samples, sampleRate);
    case 'mp3':
      return encodeMp3(int16ToFloat(samples), sampleRate);
  }
}
