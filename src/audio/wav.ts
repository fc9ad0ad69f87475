// RIFF/WAVE reading (PCM 8/16/24/32-bit and IEEE float, plain or WAVE_FORMAT_EXTENSIBLE) and
// writing (16-bit mono PCM): small enough that a library would add more than it saves.
import { AudioFormatError, type DecodedAudio } from './audio-types.js';

const formatPcm = 1;
const formatFloat = 3;
const formatExtensible = 0xfffe;

export function parseWav(bytes: Uint8Array): DecodedAudio {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const tag = (offset: number) =>
    String.fromCharCode(...bytes.subarray(offset, Math.min(offset + 4, bytes.length)));
  let format: { code: number; channels: number; sampleRate: number; bits: number } | null = null;
  let offset = 12;
  while (offset + 8 <= bytes.length) {
    const id = tag(offset);
    const size = view.getUint32(offset + 4, true);
    const body = offset + 8;
    if (id === 'fmt ' && size >= 16 && body + 16 <= bytes.length) {
      let code = view.getUint16(body, true);
      if (code === formatExtensible && size >= 40) code = view.getUint16(body + 24, true);
      format = {
        code,
        channels: view.getUint16(body + 2, true),
        sampleRate: view.getUint32(body + 4, true),
        bits: view.getUint16(body + 14, true),
      };
    } else if (id === 'data') {
      if (format === null)
        throw new AudioFormatError('The WAV file has no format chunk before its data.');
      // Streaming writers leave the size at 0 or 0xFFFFFFFF: take what is there.
      const end = size === 0 || body + size > bytes.length ? bytes.length : body + size;
      return readSamples(view, body, end, format);
    }
    offset = body + size + (size % 2);
  }
  throw new AudioFormatError('The WAV file has no data chunk.');
}

function readSamples(
  view: DataView,
  start: number,
  end: number,
  format: { code: number; channels: number; sampleRate: number; bits: number },
): DecodedAudio {
  const { code, channels: channelCount, bits, sampleRate } = format;
  const supported =
    (code === formatPcm && [8, 16, 24, 32].includes(bits)) || (code === formatFloat && bits === 32);
  if (!supported || channelCount < 1 || channelCount > 8 || sampleRate < 1000) {
    throw new AudioFormatError(
      `Unsupported WAV encoding (format ${code}, ${bits} bits, ${channelCount} channels, ${sampleRate} Hz): use 8/16/24/32-bit PCM or 32-bit float.`,
    );
  }
  const bytesPerSample = bits / 8;
  const frames = Math.floor((end - start) / (bytesPerSample * channelCount));
  const channels = Array.from({ length: channelCount }, () => new Float32Array(frames));
  let position = start;
  for (let frame = 0; frame < frames; frame += 1) {
    for (let channel = 0; channel < channelCount; channel += 1) {
      let value: number;
      if (code === formatFloat) value = view.getFloat32(position, true);
      else if (bits === 8) value = (view.getUint8(position) - 128) / 128;
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
