// A WebSocket test client (the `ws` package): collects every message and waits for the next one of
// a type, the close code, or the upgrade's HTTP refusal.
import WebSocket from 'ws';

export interface Message {
  type: string;
  [field: string]: unknown;
}

export interface TestSocket {
  socket: WebSocket;
  messages: Message[];
  /**
   * Resolves with the next message of `type` not yet taken (or already received); fails after
   * `timeoutMs` (default 60 s), a limit that only stops a wait for a message that never comes.
   */
  next(type: string, timeoutMs?: number): Promise<Message>;
  /** Resolves with the close code and reason. */
  closed: Promise<{ code: number; reason: string; at: number }>;
  sendJson(value: unknown): void;
  close(): void;
}

export function connect(
  url: string,
  headers: Record<string, string> = {},
  options: { autoPong?: boolean; allowSynchronousEvents?: boolean } = {},
): Promise<TestSocket> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, { headers, ...options });
    const messages: Message[] = [];
    const taken = new Set<Message>();
    const waiters: { type: string; resolve: (message: Message) => void }[] = [];
    socket.on('message', (data, isBinary) => {
      if (isBinary) return;
      const message = JSON.parse((data as Buffer).toString('utf8')) as Message;
      messages.push(message);
      const waiter = waiters.findIndex((candidate) => candidate.type === message.type);
      if (waiter !== -1) {
        taken.add(message);
        waiters.splice(waiter, 1)[0]!.resolve(message);
      }
    });
    const closed = new Promise<{ code: number; reason: string; at: number }>((done) =>
      socket.on('close', (code, reason) =>
        done({ code, reason: reason.toString(), at: Date.now() }),
      ),
    );
    socket.on('unexpected-response', (request, response) => {
      // The refused upgrade's connection is not kept: nothing more will use it.
      request.destroy();
      reject(new Error(`HTTP ${response.statusCode}`));
    });
    socket.on('error', (error) => reject(error));
    socket.on('open', () =>
      resolve({
        socket,
        messages,
        closed,
        next(type, timeoutMs = 60_000) {
          const waiting = messages.find((message) => message.type === type && !taken.has(message));
          if (waiting !== undefined) {
            taken.add(waiting);
            return Promise.resolve(waiting);
          }
          return new Promise((done, fail) => {
            const timer = setTimeout(
              () =>
                fail(
                  new Error(
                    `no '${type}' message within ${timeoutMs} ms; got ${messages
                      .map((message) =>
                        // An error's body says why, which is what a failure needs to show.
                        message.type === 'error' ? JSON.stringify(message) : message.type,
                      )
                      .join(', ')}`,
                  ),
                ),
              timeoutMs,
            );
            waiters.push({
              type,
              resolve: (message) => {
                clearTimeout(timer);
                done(message);
              },
            });
          });
        },
        sendJson(value) {
          socket.send(JSON.stringify(value));
        },
        close() {
          socket.close();
        },
      }),
    );
  });
}

/** The HTTP status a refused upgrade answered. */
export async function refusal(url: string, headers: Record<string, string> = {}): Promise<string> {
  try {
    const socket = await connect(url, headers);
    socket.close();
    return 'opened';
  } catch (error) {
    return (error as Error).message;
  }
}

/** Sends PCM16 in 20 ms frames (at 16 kHz: 640 bytes), paced in real time when `realTime`. */
export async function streamPcm(
  socket: WebSocket,
  pcm: Buffer,
  options: { realTime: boolean; frameBytes?: number },
): Promise<void> {
  const frameBytes = options.frameBytes ?? 640;
  for (let offset = 0; offset < pcm.length; offset += frameBytes) {
    socket.send(pcm.subarray(offset, offset + frameBytes));
    if (options.realTime) await new Promise((resolve) => setTimeout(resolve, 20));
    else if ((offset / frameBytes) % 25 === 0)
      await new Promise((resolve) => setImmediate(resolve));
  }
}
