// A fake of two cloud speech APIs on node:http, in their real wire formats, for tests and
// benchmarks: OpenAI's audio API (POST /v1/audio/transcriptions as multipart with verbose_json,
// POST /v1/audio/speech answering raw 24 kHz PCM) and Deepgram's (POST /v1/listen with the audio as
// the body, POST /v1/speak answering linear16).
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedSpeechRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: IncomingHttpHeaders;
  /** Multipart fields (transcriptions) other than the file. */
  fields: Record<string, string>;
  /** The uploaded or posted audio (transcriptions). */
  audio: Uint8Array | null;
  /** The JSON body (speech). */
  json: unknown;
}

export interface FakeSpeechUpstream {
  /** `http://127.0.0.1:PORT/v1` for OpenAI-style clients. */
  readonly openAiBaseUrl: string;
  /** `http://127.0.0.1:PORT` for Deepgram-style clients (they add `/v1/listen`). */
  readonly deepgramBaseUrl: string;
  readonly requests: RecordedSpeechRequest[];
  /** What the next transcriptions say (default "hello from the fake"). */
  transcript: string;
  /** Answers the next request with this status and an error body. */
  failNext(status: number, headers?: Record<string, string>): void;
  close(): Promise<void>;
}

/** Sine-tone PCM: 50 ms per character of the text, so a longer text gives longer audio. */
export function tonePcm(text: string, sampleRate = 24_000): Buffer {
  const samples = Math.round((text.length * 50 * sampleRate) / 1000);
  const buffer = Buffer.alloc(samples * 2);
  for (let index = 0; index < samples; index += 1) {
    buffer.writeInt16LE(
      Math.round(8000 * Math.sin((2 * Math.PI * 220 * index) / sampleRate)),
      index * 2,
    );
  }
  return buffer;
}

export async function startFakeSpeechUpstream(options: {
  openAiKey: string;
  deepgramKey: string;
  /** Default 0, an ephemeral port. */
  port?: number;
}): Promise<FakeSpeechUpstream> {
  const requests: RecordedSpeechRequest[] = [];
  const failures: { status: number; headers: Record<string, string> }[] = [];
  const state = { transcript: 'hello from the fake' };

  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      void (async () => {
        const body = Buffer.concat(chunks);
        const url = new URL(request.url ?? '/', 'http://fake');
        const record: RecordedSpeechRequest = {
          method: request.method ?? 'GET',
          path: url.pathname,
          query: Object.fromEntries(url.searchParams),
          headers: request.headers,
          fields: {},
          audio: null,
          json: undefined,
        };
        requests.push(record);
        const send = (status: number, payload: unknown, headers: Record<string, string> = {}) => {
          if (Buffer.isBuffer(payload)) {
            response.writeHead(status, { 'content-type': 'application/octet-stream', ...headers });
            response.end(payload);
          } else {
            response.writeHead(status, { 'content-type': 'application/json', ...headers });
            response.end(JSON.stringify(payload));
          }
        };
        const isOpenAi = url.pathname.startsWith('/v1/audio/');
        const expected = isOpenAi ? `Bearer ${options.openAiKey}` : `Token ${options.deepgramKey}`;
        if (request.headers.authorization !== expected) {
          return isOpenAi
            ? send(401, {
                error: {
                  message: 'Incorrect API key provided.',
                  type: 'invalid_request_error',
                  param: null,
                  code: 'invalid_api_key',
                },
              })
            : send(401, {
                err_code: 'INVALID_AUTH',
                err_msg: 'Invalid credentials.',
                request_id: 'fake',
              });
        }
        const failure = failures.shift();
        if (failure !== undefined) {
          return isOpenAi
            ? send(
                failure.status,
                {
                  error: {
                    message: 'Simulated failure.',
                    type: 'server_error',
                    param: null,
                    code: null,
                  },
                },
                failure.headers,
              )
            : send(
                failure.status,
                { err_code: 'SIMULATED', err_msg: 'Simulated failure.', request_id: 'fake' },
                failure.headers,
              );
        }
        if (request.method === 'POST' && url.pathname === '/v1/audio/transcriptions') {
          const form = await new Request('http://fake/', {
            method: 'POST',
            headers: { 'content-type': request.headers['content-type'] ?? '' },
            body: body,
          }).formData();
          for (const [name, value] of form.entries()) {
            if (typeof value === 'string') record.fields[name] = value;
            else record.audio = new Uint8Array(await value.arrayBuffer());
          }
          if (record.audio === null || record.fields.model === undefined) {
            return send(400, {
              error: {
                message: "Missing required parameter: 'file'.",
                type: 'invalid_request_error',
                param: 'file',
                code: null,
              },
            });
          }
          const duration = (record.audio.length - 44) / 32_000;
          return send(200, {
            task: 'transcribe',
            language: 'english',
            duration,
            text: state.transcript,
            segments: [
              {
                id: 0,
                seek: 0,
                start: 0,
                end: duration,
                text: state.transcript,
                tokens: [1, 2],
                temperature: 0,
                avg_logprob: -0.1,
                compression_ratio: 1,
                no_speech_prob: 0.01,
              },
              {
                id: 1,
                seek: 0,
                start: 0,
                end: duration,
                text: '',
                tokens: [3],
                temperature: 0,
                avg_logprob: -0.3,
                compression_ratio: 1,
                no_speech_prob: 0.01,
              },
            ],
          });
        }
        if (request.method === 'POST' && url.pathname === '/v1/audio/speech') {
          record.json = JSON.parse(body.toString('utf8')) as unknown;
          const input = (record.json as { input?: unknown }).input;
          if (typeof input !== 'string' || input === '') {
            return send(400, {
              error: {
                message: "Missing required parameter: 'input'.",
                type: 'invalid_request_error',
                param: 'input',
                code: null,
              },
            });
          }
          return send(200, tonePcm(input), { 'content-type': 'audio/pcm' });
        }
        if (request.method === 'POST' && url.pathname === '/v1/listen') {
          record.audio = new Uint8Array(body);
          return send(200, {
            metadata: { request_id: 'fake', duration: (body.length - 44) / 32_000, channels: 1 },
            results: {
              channels: [
                {
                  detected_language:
                    url.searchParams.get('detect_language') === 'true' ? 'en' : undefined,
                  alternatives: [{ transcript: state.transcript, confidence: 0.87, words: [] }],
                },
              ],
            },
          });
        }
        if (request.method === 'POST' && url.pathname === '/v1/speak') {
          record.json = JSON.parse(body.toString('utf8')) as unknown;
          const text = (record.json as { text?: unknown }).text;
          if (typeof text !== 'string') {
            return send(400, {
              err_code: 'INVALID_BODY',
              err_msg: 'text is required',
              request_id: 'fake',
            });
          }
          return send(200, tonePcm(text, Number(url.searchParams.get('sample_rate') ?? 24_000)), {
            'content-type': 'audio/l16',
          });
        }
        send(404, {
          error: { message: 'Not found.', type: 'invalid_request_error', param: null, code: null },
        });
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    openAiBaseUrl: `http://127.0.0.1:${port}/v1`,
    deepgramBaseUrl: `http://127.0.0.1:${port}`,
    requests,
    get transcript() {
      return state.transcript;
    },
    set transcript(value: string) {
      state.transcript = value;
    },
    failNext(status, headers = {}) {
      failures.push({ status, headers });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
