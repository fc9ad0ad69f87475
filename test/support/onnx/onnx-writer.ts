// Writes small ONNX models (protobuf by hand: a handful of fields of ModelProto, GraphProto,
// NodeProto, TensorProto and ValueInfoProto), so that the sherpa-onnx recogniser is tested for real
// without downloading a model.

function varint(value: number | bigint): number[] {
  let remaining = BigInt.asUintN(64, BigInt(value));
  const bytes: number[] = [];
  do {
    let byte = Number(remaining & 0x7fn);
    remaining >>= 7n;
    if (remaining !== 0n) byte |= 0x80;
    bytes.push(byte);
  } while (remaining !== 0n);
  return bytes;
}

type Field = number[];

const key = (field: number, wireType: number) => varint((field << 3) | wireType);
const integer = (field: number, value: number | bigint): Field => [
  ...key(field, 0),
  ...varint(value),
];
const bytes = (field: number, content: Uint8Array | number[]): Field => [
  ...key(field, 2),
  ...varint(content.length),
  ...content,
];
const text = (field: number, value: string): Field => bytes(field, [...Buffer.from(value, 'utf8')]);
const message = (field: number, ...fields: Field[]): Field => bytes(field, fields.flat());

const floatType = 1;

export interface Tensor {
  name: string;
  dims: number[];
  values: number[];
}

function tensor(field: number, value: Tensor): Field {
  const raw = Buffer.alloc(value.values.length * 4);
  value.values.forEach((number, index) => raw.writeFloatLE(number, index * 4));
  return message(
    field,
    ...value.dims.map((dim) => integer(1, dim)),
    integer(2, floatType),
    text(8, value.name),
    bytes(9, raw),
  );
}

/** A float tensor's name and shape: numbers are fixed sizes, strings named dynamic ones. */
function valueInfo(field: number, name: string, shape: (number | string)[]): Field {
  const dims = shape.map((dim) =>
    message(1, typeof dim === 'number' ? integer(1, dim) : text(2, dim)),
  );
  return message(
    field,
    text(1, name),
    message(2, message(1, integer(1, floatType), message(2, ...dims))),
  );
}

export interface Node {
  op: string;
  inputs: string[];
  outputs: string[];
}

export interface OnnxModel {
  inputs: { name: string; shape: (number | string)[] }[];
  outputs: { name: string; shape: (number | string)[] }[];
  nodes: Node[];
  initializers: Tensor[];
  metadata: Record<string, string>;
}

export function writeOnnx(model: OnnxModel): Buffer {
  const graph = message(
    7,
    ...model.nodes.map((node, index) =>
      message(
        1,
        ...node.inputs.map((input) => text(1, input)),
        ...node.outputs.map((output) => text(2, output)),
        text(3, `node${index}`),
        text(4, node.op),
      ),
    ),
    text(2, 'graph'),
    ...model.initializers.map((initializer) => tensor(5, initializer)),
    ...model.inputs.map((input) => valueInfo(11, input.name, input.shape)),
    ...model.outputs.map((output) => valueInfo(12, output.name, output.shape)),
  );
  return Buffer.from([
    ...integer(1, 8),
    ...text(2, 'platform-tests'),
    ...graph,
    ...message(8, text(1, ''), integer(2, 13)),
    ...Object.entries(model.metadata).flatMap(([name, value]) =>
      message(14, text(1, name), text(2, value)),
    ),
  ]);
}

/**
 * A TDNN-style CTC model over 23 log-mel features: blank while the frame's mean log energy is
 * below zero, token `Y` while it is above — so each burst of sound separated by silence is one
 * `Y`, and silence is nothing. Tokens: `<blk>` 0, `N` 1, `Y` 2.
 */
export function loudnessCtcModel(): { model: Buffer; tokens: string } {
  const features = 23;
  const weights: number[] = [];
  for (let row = 0; row < features; row += 1) weights.push(0, 0, 1 / features);
  return {
    model: writeOnnx({
      inputs: [{ name: 'x', shape: ['N', 'T', features] }],
      outputs: [{ name: 'log_probs', shape: ['N', 'T', 3] }],
      nodes: [
        { op: 'MatMul', inputs: ['x', 'W'], outputs: ['scores'] },
        { op: 'Add', inputs: ['scores', 'B'], outputs: ['logits'] },
        { op: 'LogSoftmax', inputs: ['logits'], outputs: ['log_probs'] },
      ],
      initializers: [
        { name: 'W', dims: [features, 3], values: weights },
        { name: 'B', dims: [3], values: [0, -100, 0] },
      ],
      metadata: { vocab_size: '3', model_type: 'tdnn' },
    }),
    tokens: '<blk> 0\nN 1\nY 2\n',
  };
}
