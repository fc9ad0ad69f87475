// RIFF/WAVE reading (PCM 8/16/24/32-bit and IEEE float, plain or WAVE_FORMAT_EXTENSIBLE) and
// writing (16-bit mono PCM): small enough that a library would add more than it saves. Every
// header field the reading relies on is range-checked first: a hostile header is a 400, never a
// failure deeper down (a resampler refusing a rate of 0xFFFFFFFF Hz, a NaN duration).
import { AudioFormatError, type DecodedAudio } from './audio-types.js';
import { checkLength, checkShape, type DecodeLimits } from './decode-limits.js';

const formatPcm = 1;
const formatFloat = 3;
const formatExtensible = 0xfffe;

interface WavFormat {
  code: number;
  channels: number;
  sampleRate: number;
  bits: number;
  blockAlign: number;
}

export function parseWav(bytes: Uint8Array, limits: DecodeLimits): DecodedAudio {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const tag = (offset: number) =>
    String.fromCharCode(...bytes.subarray(offset, Math.min(offset + 4, bytes.length)));
  let format: WavFormat | null = null;
  let offset = 12;
  // Each step moves past at least one 8-byte chunk header: linear in the file's size.
  while (offset + 8 <= bytes.length) {
    const id = tag(offset);
    const size = view.getUint32(offset + 4, true);
    const body = offset + 8;
    if (id === 'fmt ') {
      if (size < 16 || body + 16 > bytes.length) {
        throw new AudioFormatError('The WAV format chunk is shorter than 16 bytes.');
      }
      let code = view.getUint16(body, true);
      if (code === formatExtensible) {
        if (size < 40 || body + 40 > bytes.length) {
          throw new AudioFormatError('The WAV extensible format chunk is shorter than 40 bytes.');
        }
        code = view.getUint16(body + 24, true);
      }
      format = {
        code,
        channels: view.getUint16(body + 2, true),
        sampleRate: view.getUint32(body + 4, true),
        blockAlign: view.getUint16(body + 12, true),
        bits: view.getUint16(body + 14, true),
      };
      checkFormat(format);
    } else if (id === 'data') {
      if (format === null)
        throw new AudioFormatError('The WAV file has no format chunk before its data.');
      // Streaming writers leave the size at 0 or 0xFFFFFFFF: take what is there.
      const end = size === 0 || body + size > bytes.length ? bytes.length : body + size;
      return readSamples(view, body, end, format, limits);
    }
    offset = body + size + (size % 2);
  }
  throw new AudioFormatError('The WAV file has no data chunk.');
}

function checkFormat(format: WavFormat): void {
  const { code, bits, channels, sampleRate, blockAlign } = format;
  const supported =
    (code === formatPcm && [8, 16, 24, 32].includes(bits)) || (code === formatFloat && bits === 32);
  if (!supported) {
    throw new AudioFormatError(
      `Unsupported WAV encoding (format ${code}, ${bits} bits): use 8/16/24/32-bit PCM or 32-bit float.`,
    );
  }
  checkShape('WAV', sampleRate, channels);
  if (blockAlign !== (channels * bits) / 8) {
    throw new AudioFormatError(
      `The WAV header's block align (${blockAlign}) is not ${channels} channels × ${bits / 8} bytes.`,
    );
  }
}

function readSamples(
  view: DataView,
  start: number,
  end: number,
  format: WavFormat,
  limits: DecodeLimits,
): DecodedAudio {
  const { code, channels: channelCount, bits, sampleRate, blockAlign } = format;
  const bytesPerSample = bits / 8;
  const frames = Math.floor((end - start) / blockAlign);
  checkLength(limits, frames, sampleRate, channelCount, true);
  const channels = Array.from({ length: channelCount }, () => new Float32Array(frames));
  let position = start;
  for (let frame = 0; frame < frames; frame += 1) {
    for (let channel = 0; channel < channelCount; channel += 1) {
      let value: number;
      if (code === formatFloat) {
        value = view.getFloat32(position, true);
        // NaN and infinities in a float file are silence.
        if (!Number.isFinite(value)) value = 0;
      } else if (bits === 8) value = (view.getUint8(position) - 128) / 128;
      else if (bits === 16) value = view.getInt16(position, true) / 32768;
      else if (bits === 24) {
        const low = view.getUint16(position, true);
        const high = view.getInt8(position + 2);
        value = ((high << 16) | low) / 8_388_608;
      } else value = view.getInt32(position, true) / 2_147_483_648;
      channels[channel]![frame] = value;
      position += bytesPerSample;
    }
  }
  return { channels, sampleRate };
}

/** A 16-bit mono PCM WAV file. */
export function wavFile(samples: Int16Array, sampleRate: number): Uint8Array {
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + samples.byteLength, 4);
  header.write('WAVE', 8, 'ascii');
  header.write('fmt ', 12, 'ascii');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(formatPcm, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(sampleRate, 24);
  header.writeUInt32LE(sampleRate * 2, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(samples.byteLength, 40);
  return Buffer.concat([
    header,
    Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength),
  ]);
}
