// Minimal GGUF v3 writer (little-endian), enough to build synthetic model files for tests.
import { open } from 'node:fs/promises';

/** GGUF metadata value type codes, as fixed by the GGUF specification. */
const valueTypeCode = {
  uint32: 4,
  int32: 5,
  float32: 6,
  bool: 7,
  string: 8,
  array: 9,
  uint64: 10,
} as const;

/**
 * ggml tensor types this writer knows the byte size of. Only F32 is needed today; the type is still
 * an explicit field on every tensor so that adding a type is a table entry, not a format change.
 */
export const GgmlType = { F32: 0 } as const;
export type GgmlType = (typeof GgmlType)[keyof typeof GgmlType];
const bytesPerElement: Record<GgmlType, number> = { [GgmlType.F32]: 4 };

/**
 * A metadata value together with its GGUF type. The type is spelled out by the caller because a
 * JavaScript number does not say whether llama.cpp expects it as uint32, int32 or float32, and
 * llama.cpp rejects keys stored with the wrong type.
 */
export type GgufMetadataValue =
  | { type: 'uint32'; value: number }
  | { type: 'int32'; value: number }
  | { type: 'uint64'; value: bigint }
  | { type: 'float32'; value: number }
  | { type: 'bool'; value: boolean }
  | { type: 'string'; value: string }
  | { type: 'string[]'; value: readonly string[] }
  | { type: 'float32[]'; value: ArrayLike<number> }
  | { type: 'int32[]'; value: ArrayLike<number> };

export interface GgufTensor {
  name: string;
  /** ggml order: innermost (contiguous) dimension first, i.e. the reverse of numpy's shape. */
  dimensions: readonly number[];
  type: GgmlType;
  /** Raw little-endian element data; its length must match the dimensions. */
  data: Float32Array;
}

export interface GgufFile {
  /** Key order is kept as given; `general.alignment` (uint32) changes the padding if present. */
  metadata: Record<string, GgufMetadataValue>;
  tensors: readonly GgufTensor[];
}

const defaultAlignment = 32;

/** Growable little-endian byte sink for the header, which is small but of unknown size up front. */
class ByteSink {
  private buffer = Buffer.alloc(4096);
  length = 0;

  private reserve(byteCount: number): number {
    if (this.length + byteCount > this.buffer.length) {
      const grown = Buffer.alloc(Math.max(this.buffer.length * 2, this.length + byteCount));
      this.buffer.copy(grown, 0, 0, this.length);
      this.buffer = grown;
    }
    const offset = this.length;
    this.length += byteCount;
    return offset;
  }

  // Each writer reserves first and only then reads `this.buffer`: reserving may swap in a larger
  // buffer, and `this.buffer.write…(value, this.reserve(n))` would write into the stale one.
  uint32(value: number): void {
    const offset = this.reserve(4);
    this.buffer.writeUInt32LE(value, offset);
  }
  int32(value: number): void {
    const offset = this.reserve(4);
    this.buffer.writeInt32LE(value, offset);
  }
  uint64(value: number | bigint): void {
    const offset = this.reserve(8);
    this.buffer.writeBigUInt64LE(BigInt(value), offset);
  }
  float32(value: number): void {
    const offset = this.reserve(4);
    this.buffer.writeFloatLE(value, offset);
  }
  bool(value: boolean): void {
    const offset = this.reserve(1);
    this.buffer.writeUInt8(value ? 1 : 0, offset);
  }
  /** GGUF strings are a uint64 byte length followed by UTF-8 bytes, with no terminator. */
  string(value: string): void {
    const bytes = Buffer.from(value, 'utf8');
    this.uint64(bytes.length);
    const offset = this.reserve(bytes.length);
    bytes.copy(this.buffer, offset);
  }
  zeros(byteCount: number): void {
    const offset = this.reserve(byteCount);
    this.buffer.fill(0, offset, this.length);
  }
  contents(): Buffer {
    return this.buffer.subarray(0, this.length);
  }
}

function paddingFor(offset: number, alignment: number): number {
  return (alignment - (offset % alignment)) % alignment;
}

function writeArray<T>(
  sink: ByteSink,
  elementType: number,
  values: ArrayLike<T>,
  writeElement: (value: T) => void,
): void {
  sink.uint32(elementType);
  sink.uint64(values.length);
  for (let index = 0; index < values.length; index++) writeElement(values[index]!);
}

function writeValue(sink: ByteSink, entry: GgufMetadataValue): void {
  switch (entry.type) {
    case 'uint32':
      sink.uint32(valueTypeCode.uint32);
      return sink.uint32(entry.value);
    case 'int32':
      sink.uint32(valueTypeCode.int32);
      return sink.int32(entry.value);
    case 'uint64':
      sink.uint32(valueTypeCode.uint64);
      return sink.uint64(entry.value);
    case 'float32':
      sink.uint32(valueTypeCode.float32);
      return sink.float32(entry.value);
    case 'bool':
      sink.uint32(valueTypeCode.bool);
      return sink.bool(entry.value);
    case 'string':
      sink.uint32(valueTypeCode.string);
      return sink.string(entry.value);
    case 'string[]':
      sink.uint32(valueTypeCode.array);
      return writeArray(sink, valueTypeCode.string, entry.value, (value) => sink.string(value));
    case 'float32[]':
      sink.uint32(valueTypeCode.array);
      return writeArray(sink, valueTypeCode.float32, entry.value, (value) => sink.float32(value));
    case 'int32[]':
      sink.uint32(valueTypeCode.array);
      return writeArray(sink, valueTypeCode.int32, entry.value, (value) => sink.int32(value));
  }
}

function tensorByteLength(tensor: GgufTensor): number {
  const elementCount = tensor.dimensions.reduce((product, dimension) => product * dimension, 1);
  const byteLength = elementCount * bytesPerElement[tensor.type];
  // A mismatch would otherwise surface later as an opaque "tensor data out of bounds" in llama.cpp.
  if (tensor.data.byteLength !== byteLength) {
    const shape = tensor.dimensions.join(', ');
    throw new Error(
      `Tensor ${tensor.name}: dimensions [${shape}] need ${byteLength} bytes, ` +
        `data has ${tensor.data.byteLength}`,
    );
  }
  return byteLength;
}

function resolveAlignment(metadata: GgufFile['metadata']): number {
  const entry = metadata['general.alignment'];
  if (entry === undefined) return defaultAlignment;
  // llama.cpp only honours the key as a uint32 power of two; anything else desyncs the offsets.
  if (entry.type !== 'uint32' || entry.value <= 0 || (entry.value & (entry.value - 1)) !== 0) {
    throw new Error('general.alignment must be a uint32 power of two');
  }
  return entry.value;
}

/** Serialises everything before the tensor data: header, metadata and tensor infos, padded. */
function encodeHeader(file: GgufFile, alignment: number): Buffer {
  const sink = new ByteSink();
  sink.uint32(0x46554747); // "GGUF" read as a little-endian uint32
  sink.uint32(3);
  sink.uint64(file.tensors.length);
  const entries = Object.entries(file.metadata);
  sink.uint64(entries.length);
  for (const [key, entry] of entries) {
    sink.string(key);
    writeValue(sink, entry);
  }

  // Offsets are relative to the data section, and each tensor must start on an aligned boundary
  // because llama.cpp may mmap the file and hand these pointers straight to SIMD kernels.
  let dataOffset = 0;
  for (const tensor of file.tensors) {
    dataOffset += paddingFor(dataOffset, alignment);
    sink.string(tensor.name);
    sink.uint32(tensor.dimensions.length);
    for (const dimension of tensor.dimensions) sink.uint64(dimension);
    sink.uint32(tensor.type);
    sink.uint64(dataOffset);
    dataOffset += tensorByteLength(tensor);
  }
  sink.zeros(paddingFor(sink.length, alignment));
  return sink.contents();
}

/**
 * Writes `file` to `filePath`. Tensor data is written straight from the caller's arrays rather than
 * copied into one big buffer, so peak memory stays at roughly the size of the weights themselves.
 */
export async function writeGgufFile(filePath: string, file: GgufFile): Promise<void> {
  // Tensor bytes are copied verbatim from the typed arrays, which use the host's byte order.
  if (new Uint8Array(new Uint16Array([1]).buffer)[0] !== 1) {
    throw new Error('writeGgufFile only supports little-endian hosts');
  }
  const alignment = resolveAlignment(file.metadata);
  const header = encodeHeader(file, alignment);
  const handle = await open(filePath, 'w');
  try {
    await handle.write(header);
    let dataOffset = 0;
    for (const tensor of file.tensors) {
      const padding = paddingFor(dataOffset, alignment);
      if (padding > 0) await handle.write(Buffer.alloc(padding));
      // Valid as-is only on little-endian hosts; see the check at the top of this function.
      const bytes = Buffer.from(tensor.data.buffer, tensor.data.byteOffset, tensor.data.byteLength);
      await handle.write(bytes);
      dataOffset += padding + bytes.length;
    }
  } finally {
    await handle.close();
  }
}
