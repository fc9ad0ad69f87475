// Real local HTTP servers for the web agent's tests: each counts its connections and records every
// request (path, query, headers, body), so a test can prove what was sent and what never arrived.
import http from 'node:http';
import net from 'node:net';

export interface RecordedRequest {
  method: string;
  /** Path and query, as sent. */
  path: string;
  url: URL;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export type TestHandler = (
  request: RecordedRequest,
  response: http.ServerResponse,
) => void | Promise<void>;

export interface TestServer {
  port: number;
  /** `http://127.0.0.1:<port>` (the server may listen on `::` as well). */
  origin: string;
  requests: RecordedRequest[];
  /** Local address of every accepted connection (`::ffff:127.0.0.1`, `::1`, …). */
  connectionAddresses: string[];
  readonly connections: number;
  /** Forgets the recorded requests and connections. */
  reset(): void;
  close(): Promise<void>;
}

/** Starts a server on `host` (default 127.0.0.1; `::` accepts IPv4 and IPv6 loopback both). */
export async function startTestServer(
  handler: TestHandler,
  options: { host?: string } = {},
): Promise<TestServer> {
  const requests: RecordedRequest[] = [];
  const connectionAddresses: string[] = [];
  const server = http.createServer((incoming, response) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const path = incoming.url ?? '/';
      const recorded: RecordedRequest = {
        method: incoming.method ?? 'GET',
        path,
        url: new URL(path, 'http://test.invalid'),
        headers: incoming.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      requests.push(recorded);
      Promise.resolve(handler(recorded, response)).catch((error: unknown) => {
        response.destroy(error instanceof Error ? error : new Error(String(error)));
      });
    });
  });
  server.on('connection', (socket: net.Socket) => {
    connectionAddresses.push(socket.localAddress ?? '');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, options.host ?? '127.0.0.1', () => resolve());
  });
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    origin: `http://127.0.0.1:${port}`,
    requests,
    connectionAddresses,
    get connections() {
      return connectionAddresses.length;
    },
    reset() {
      requests.length = 0;
      connectionAddresses.length = 0;
    },
    close() {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Whether this machine can listen on `::` and reach `::1` (not every container has IPv6). */
export async function ipv6LoopbackAvailable(): Promise<boolean> {
  const server = net.createServer((socket) => socket.destroy());
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '::1', () => resolve());
    });
    const port = (server.address() as net.AddressInfo).port;
    return await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '::1', () => {
        socket.destroy();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
  } catch {
    return false;
  } finally {
    server.close();
  }
}

/** Sends `body` as JSON with the given status. */
export function sendJson(response: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
  });
  response.end(text);
}
