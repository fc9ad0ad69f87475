// A real OTLP/HTTP receiver for tests: takes `POST /v1/traces` and `POST /v1/metrics` in JSON
// (`application/json`) and in protobuf (`application/x-protobuf`), as a collector does, and keeps
// the spans and metric names it was sent. Protobuf is read with a small decoder of the wire format
// over the few messages of OTLP it needs (opentelemetry-proto's trace and metrics services).
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** '' for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client. */
  kind: number;
  attributes: Record<string, unknown>;
  /** OTLP's status code: 0 unset, 1 ok, 2 error. */
  statusCode: number;
}

export interface OtlpReceiver {
  /** E.g. `http://127.0.0.1:4318`, what OTEL_EXPORTER_OTLP_ENDPOINT takes. */
  readonly endpoint: string;
  readonly spans: ReceivedSpan[];
  readonly metricNames: Set<string>;
  /** The content types of the exports received (`application/x-protobuf`, …). */
  readonly contentTypes: Set<string>;
  close(): Promise<void>;
}

// ---- protobuf wire format -------------------------------------------------------------------

type Fields = Map<number, Array<bigint | Uint8Array>>;

function readVarint(bytes: Uint8Array, at: { offset: number }): bigint {
  let result = 0n;
  for (let shift = 0n; ; shift += 7n) {
    const byte = bytes[at.offset++];
    if (byte === undefined) throw new Error('truncated varint');
    result |= BigInt(byte & 0x7f) << shift;
    if ((byte & 0x80) === 0) return result;
  }
}

/** A message's fields by number: varints and fixed numbers as bigint, the rest as bytes. */
function fieldsOf(bytes: Uint8Array): Fields {
  const fields: Fields = new Map();
  const at = { offset: 0 };
  while (at.offset < bytes.length) {
    const tag = Number(readVarint(bytes, at));
    const number = tag >>> 3;
    let value: bigint | Uint8Array;
    switch (tag & 7) {
      case 0:
        value = readVarint(bytes, at);
        break;
      case 1:
        value = new DataView(bytes.buffer, bytes.byteOffset + at.offset, 8).getBigUint64(0, true);
        at.offset += 8;
        break;
      case 2: {
        const length = Number(readVarint(bytes, at));
        value = bytes.subarray(at.offset, at.offset + length);
        at.offset += length;
        break;
      }
      case 5:
        value = BigInt(
          new DataView(bytes.buffer, bytes.byteOffset + at.offset, 4).getUint32(0, true),
        );
        at.offset += 4;
        break;
      default:
        throw new Error(`unsupported wire type ${tag & 7}`);
    }
    const list = fields.get(number) ?? [];
    list.push(value);
    fields.set(number, list);
  }
  return fields;
}

const messages = (fields: Fields, number: number) =>
  (fields.get(number) ?? []).map((value) => fieldsOf(value as Uint8Array));
const bytesOf = (fields: Fields, number: number) =>
  (fields.get(number)?.[0] as Uint8Array | undefined) ?? new Uint8Array();
const text = (fields: Fields, number: number) => Buffer.from(bytesOf(fields, number)).toString();
const hex = (fields: Fields, number: number) =>
  Buffer.from(bytesOf(fields, number)).toString('hex');
const varint = (fields: Fields, number: number) =>
  Number((fields.get(number)?.[0] as bigint) ?? 0n);

/** AnyValue: string 1, bool 2, int 3, double 4, array 5. */
function anyValue(fields: Fields): unknown {
  if (fields.has(1)) return text(fields, 1);
  if (fields.has(2)) return varint(fields, 2) !== 0;
  if (fields.has(3)) return Number(BigInt.asIntN(64, fields.get(3)![0] as bigint));
  if (fields.has(4)) {
    const view = new DataView(new ArrayBuffer(8));
    view.setBigUint64(0, fields.get(4)![0] as bigint, true);
    return view.getFloat64(0, true);
  }
  if (fields.has(5)) return messages(messages(fields, 5)[0]!, 1).map(anyValue);
  return null;
}

function protobufAttributes(list: Fields[]): Record<string, unknown> {
  const attributes: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  for (const pair of list) attributes[text(pair, 1)] = anyValue(messages(pair, 2)[0] ?? new Map());
  return attributes;
}

function protobufSpans(body: Uint8Array): ReceivedSpan[] {
  return messages(fieldsOf(body), 1).flatMap((resource) =>
    messages(resource, 2).flatMap((scope) =>
      messages(scope, 2).map((span) => ({
        traceId: hex(span, 1),
        spanId: hex(span, 2),
        parentSpanId: hex(span, 4),
        name: text(span, 5),
        kind: varint(span, 6),
        attributes: protobufAttributes(messages(span, 9)),
        statusCode: varint(messages(span, 15)[0] ?? new Map(), 3),
      })),
    ),
  );
}

function protobufMetricNames(body: Uint8Array): string[] {
  return messages(fieldsOf(body), 1).flatMap((resource) =>
    messages(resource, 2).flatMap((scope) => messages(scope, 2).map((metric) => text(metric, 1))),
  );
}

// ---- JSON ------------------------------------------------------------------------------------

interface JsonValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string | number;
  doubleValue?: number;
  arrayValue?: { values?: JsonValue[] };
}

function jsonValue(value: JsonValue): unknown {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.arrayValue !== undefined) return (value.arrayValue.values ?? []).map(jsonValue);
  return null;
}

interface JsonSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: Array<{ key: string; value: JsonValue }>;
  status?: { code?: number };
}

function jsonSpans(body: {
  resourceSpans?: Array<{ scopeSpans?: Array<{ spans?: JsonSpan[] }> }>;
}): ReceivedSpan[] {
  return (body.resourceSpans ?? []).flatMap((resource) =>
    (resource.scopeSpans ?? []).flatMap((scope) =>
      (scope.spans ?? []).map((span) => {
        const attributes: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
        for (const pair of span.attributes ?? []) attributes[pair.key] = jsonValue(pair.value);
        return {
          traceId: span.traceId,
          spanId: span.spanId,
          parentSpanId: span.parentSpanId ?? '',
          name: span.name,
          kind: span.kind,
          attributes,
          statusCode: span.status?.code ?? 0,
        };
      }),
    ),
  );
}

function jsonMetricNames(body: {
  resourceMetrics?: Array<{ scopeMetrics?: Array<{ metrics?: Array<{ name: string }> }> }>;
}): string[] {
  return (body.resourceMetrics ?? []).flatMap((resource) =>
    (resource.scopeMetrics ?? []).flatMap((scope) =>
      (scope.metrics ?? []).map((metric) => metric.name),
    ),
  );
}

// ---- the server ------------------------------------------------------------------------------

async function bodyOf(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const metricNames = new Set<string>();
  const contentTypes = new Set<string>();
  const server: Server = createServer((request, response) => {
    void bodyOf(request).then((body) => {
      const type = (request.headers['content-type'] ?? '').split(';', 1)[0]!.trim();
      contentTypes.add(type);
      const json = type === 'application/json';
      if (request.url === '/v1/traces') {
        spans.push(
          ...(json
            ? jsonSpans(JSON.parse(body.toString()) as Parameters<typeof jsonSpans>[0])
            : protobufSpans(body)),
        );
      } else if (request.url === '/v1/metrics') {
        const names = json
          ? jsonMetricNames(JSON.parse(body.toString()) as Parameters<typeof jsonMetricNames>[0])
          : protobufMetricNames(body);
        for (const name of names) metricNames.add(name);
      }
      // An empty ExportServiceResponse, in the request's encoding.
      response.writeHead(200, {
        'content-type': json ? 'application/json' : 'application/x-protobuf',
      });
      response.end(json ? '{}' : undefined);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans,
    metricNames,
    contentTypes,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
