// Hostile audio files for the decoding tests: headers with out-of-range fields, garbage after a
// valid signature, and small compressed files that expand to hours of audio ("decompression
// bombs"). Built byte by byte here, with the checksums their formats carry.

/** A WAV file with every header field settable (defaults: 16 kHz mono 16-bit PCM of silence). */
export interface WavFields {
  formatCode?: number;
  channels?: number;
  sampleRate?: number;
  byteRate?: number;
  blockAlign?: number;
  bitsPerSample?: number;
  fmtSize?: number;
  riffSize?: number;
  /** The data chunk's declared size (default: the real size). */
  dataSize?: number;
  /** Bytes of sample data (default 3200: 0.1 s). */
  dataBytes?: number;
  /** Extra chunks before `fmt `: [id, declared size, bytes present]. */
  extraChunks?: [string, number, number][];
  /** 0 fills the samples with silence; otherwise a pseudo-random fill from this seed. */
  noiseSeed?: number;
}

export function wavWith(fields: WavFields = {}): Buffer {
  const channels = fields.channels ?? 1;
  const bits = fields.bitsPerSample ?? 16;
  const sampleRate = fields.sampleRate ?? 16000;
  const blockAlign = fields.blockAlign ?? (channels * bits) / 8;
  const dataBytes = fields.dataBytes ?? 3200;
  const fmtSize = fields.fmtSize ?? 16;
  const parts: Buffer[] = [];
  const riff = Buffer.alloc(12);
  riff.write('RIFF', 0, 'ascii');
  riff.write('WAVE', 8, 'ascii');
  parts.push(riff);
  for (const [id, declared, present] of fields.extraChunks ?? []) {
    const chunk = Buffer.alloc(8 + present);
    chunk.write(id.padEnd(4).slice(0, 4), 0, 'latin1');
    chunk.writeUInt32LE(declared >>> 0, 4);
    parts.push(chunk);
  }
  const fmt = Buffer.alloc(8 + Math.max(16, Math.min(fmtSize, 64)));
  fmt.write('fmt ', 0, 'ascii');
  fmt.writeUInt32LE(fmtSize >>> 0, 4);
  fmt.writeUInt16LE((fields.formatCode ?? 1) & 0xffff, 8);
  fmt.writeUInt16LE(channels & 0xffff, 10);
  fmt.writeUInt32LE(sampleRate >>> 0, 12);
  fmt.writeUInt32LE((fields.byteRate ?? sampleRate * blockAlign) >>> 0, 16);
  fmt.writeUInt16LE(blockAlign & 0xffff, 20);
  fmt.writeUInt16LE(bits & 0xffff, 22);
  parts.push(fmt);
  const data = Buffer.alloc(8 + dataBytes);
  data.write('data', 0, 'ascii');
  data.writeUInt32LE((fields.dataSize ?? dataBytes) >>> 0, 4);
  if (fields.noiseSeed !== undefined && fields.noiseSeed !== 0) {
    let state = fields.noiseSeed >>> 0 || 1;
    for (let index = 8; index < data.length; index += 1) {
      state = (state * 1_103_515_245 + 12_345) >>> 0;
      data[index] = state >>> 24;
    }
  }
  parts.push(data);
  const file = Buffer.concat(parts);
  file.writeUInt32LE((fields.riffSize ?? file.length - 8) >>> 0, 4);
  return file;
}

function crc8(bytes: Uint8Array): number {
  let crc = 0;
  for (const byte of bytes) {
    crc ^= byte;
    for (let bit = 0; bit < 8; bit += 1) crc = crc & 0x80 ? ((crc << 1) ^ 0x07) & 0xff : crc << 1;
  }
  return crc & 0xff;
}

function crc16(bytes: Uint8Array): number {
  let crc = 0;
  for (const byte of bytes) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit += 1) {
      crc = crc & 0x8000 ? ((crc << 1) ^ 0x8005) & 0xffff : (crc << 1) & 0xffff;
    }
  }
  return crc;
}

/** A frame number in FLAC's UTF-8-like coding (numbers below 2048 are enough here). */
function flacFrameNumber(number: number): number[] {
  if (number < 0x80) return [number];
  return [0xc0 | (number >> 6), 0x80 | (number & 0x3f)];
}

/**
 * A FLAC stream of `frames` frames of 65,535 samples of silence, 16 kHz mono 16-bit, each frame a
 * single CONSTANT subframe: 14 bytes of file per 4 s of audio. The STREAMINFO declares
 * `declaredSamples` (0: unknown, as streaming encoders write).
 */
export function flacBomb(frames: number, declaredSamples = 0): Buffer {
  const blockSize = 65_535;
  const streamInfo = Buffer.alloc(4 + 34);
  streamInfo[0] = 0x80; // last metadata block, type 0 (STREAMINFO)
  streamInfo.writeUIntBE(34, 1, 3);
  streamInfo.writeUInt16BE(blockSize, 4);
  streamInfo.writeUInt16BE(blockSize, 6);
  // Sample rate (20 bits) 16000, channels-1 (3 bits) 0, bits-1 (5 bits) 15, total samples (36 bits).
  const packed =
    (BigInt(16000) << 44n) | (0n << 41n) | (15n << 36n) | BigInt(declaredSamples & 0xfffffffff);
  streamInfo.writeBigUInt64BE(packed, 14);
  const parts: Buffer[] = [Buffer.from('fLaC', 'latin1'), streamInfo];
  for (let number = 0; number < frames; number += 1) {
    // Sync + fixed block size; block size "16 bits follow", 16 kHz; mono, 16-bit.
    const header = [
      0xff,
      0xf8,
      (0b0111 << 4) | 0b0101,
      (0b0000 << 4) | (0b100 << 1),
      ...flacFrameNumber(number),
      (blockSize - 1) >> 8,
      (blockSize - 1) & 0xff,
    ];
    header.push(crc8(Uint8Array.from(header)));
    // Subframe: CONSTANT (type 000000), no wasted bits, the value 0 in 16 bits.
    const frame = [...header, 0x00, 0x00, 0x00];
    const crc = crc16(Uint8Array.from(frame));
    parts.push(Buffer.from([...frame, crc >> 8, crc & 0xff]));
  }
  return Buffer.concat(parts);
}

const oggCrcTable = Array.from({ length: 256 }, (_, index) => {
  let crc = index << 24;
  for (let bit = 0; bit < 8; bit += 1) {
    crc = crc & 0x80000000 ? ((crc << 1) ^ 0x04c11db7) >>> 0 : (crc << 1) >>> 0;
  }
  return crc >>> 0;
});

function oggPage(type: number, granule: bigint, sequence: number, packets: Uint8Array[]): Buffer {
  const segments = packets.flatMap((packet) => {
    const lacing = Array<number>(Math.floor(packet.length / 255)).fill(255);
    lacing.push(packet.length % 255);
    return lacing;
  });
  const header = Buffer.alloc(27 + segments.length);
  header.write('OggS', 0, 'latin1');
  header[5] = type;
  header.writeBigInt64LE(granule, 6);
  header.writeUInt32LE(0x5eed, 14);
  header.writeUInt32LE(sequence, 18);
  header[26] = segments.length;
  Buffer.from(segments).copy(header, 27);
  const page = Buffer.concat([header, ...packets]);
  let crc = 0;
  for (const byte of page) crc = ((crc << 8) ^ oggCrcTable[((crc >>> 24) ^ byte) & 0xff]!) >>> 0;
  page.writeUInt32LE(crc >>> 0, 22);
  return page;
}

/**
 * An Ogg/Opus stream of `pages` pages, each of 255 one-byte packets (SILK, 60 ms, an empty frame
 * the decoder conceals): about 537 bytes of file per 15 s of audio.
 */
export function oggOpusBomb(pages: number): Buffer {
  const head = Buffer.alloc(19);
  head.write('OpusHead', 0, 'latin1');
  head[8] = 1;
  head[9] = 1;
  head.writeUInt16LE(312, 10);
  head.writeUInt32LE(16000, 12);
  const tags = Buffer.alloc(16);
  tags.write('OpusTags', 0, 'latin1');
  const parts = [oggPage(0x02, 0n, 0, [head]), oggPage(0x00, 0n, 1, [tags])];
  const packet = Uint8Array.of(3 << 3);
  let granule = 0n;
  for (let index = 0; index < pages; index += 1) {
    granule += 255n * 2880n;
    parts.push(
      oggPage(
        index === pages - 1 ? 0x04 : 0x00,
        granule,
        index + 2,
        Array.from({ length: 255 }, () => packet),
      ),
    );
  }
  return Buffer.concat(parts);
}
