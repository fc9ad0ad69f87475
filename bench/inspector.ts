// A minimal Chrome DevTools Protocol client for a child started with `--inspect=127.0.0.1:<port>`:
// its memory figures, a forced full GC, and heap snapshots written to a file (for bench/soak.ts).
import { createWriteStream } from 'node:fs';
import WebSocket from 'ws';

export interface MemoryUsage {
  rss: number;
  heapTotal: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
}

export class InspectorClient {
  private nextId = 1;
  private readonly waiting = new Map<
    number,
    { resolve: (value: unknown) => void; reject: (error: Error) => void }
  >();
  private readonly listeners = new Map<string, (params: Record<string, unknown>) => void>();

  private constructor(private readonly socket: WebSocket) {
    socket.on('message', (data) => {
      const message = JSON.parse((data as Buffer).toString('utf8')) as {
        id?: number;
        method?: string;
        params?: Record<string, unknown>;
        result?: unknown;
        error?: { message: string };
      };
      if (message.id !== undefined) {
        const waiter = this.waiting.get(message.id);
        this.waiting.delete(message.id);
        if (message.error !== undefined) waiter?.reject(new Error(message.error.message));
        else waiter?.resolve(message.result);
      } else if (message.method !== undefined) {
        this.listeners.get(message.method)?.(message.params ?? {});
      }
    });
  }

  /** Connects to the first target of the inspector at `port` (retrying while it starts). */
  static async connect(port: number): Promise<InspectorClient> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      try {
        const targets = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as {
          webSocketDebuggerUrl: string;
        }[];
        const socket = new WebSocket(targets[0]!.webSocketDebuggerUrl, { maxPayload: 2 ** 30 });
        await new Promise((resolve, reject) => {
          socket.once('open', resolve);
          socket.once('error', reject);
        });
        return new InspectorClient(socket);
      } catch (error) {
        if (Date.now() > deadline) throw error;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
  }

  call<T = unknown>(method: string, params: Record<string, unknown> = {}): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.waiting.set(id, { resolve: resolve as (value: unknown) => void, reject });
      this.socket.send(JSON.stringify({ id, method, params }));
    });
  }

  /** `process.memoryUsage()` inside the child. */
  async memoryUsage(): Promise<MemoryUsage> {
    const answer = await this.call<{ result: { value: MemoryUsage } }>('Runtime.evaluate', {
      expression: 'process.memoryUsage()',
      returnByValue: true,
    });
    return answer.result.value;
  }

  /** A full, compacting garbage collection in the child. */
  async collectGarbage(): Promise<void> {
    await this.call('HeapProfiler.collectGarbage');
  }

  /** Writes a heap snapshot (it collects garbage first) to `file`. */
  async writeHeapSnapshot(file: string): Promise<void> {
    const output = createWriteStream(file);
    this.listeners.set('HeapProfiler.addHeapSnapshotChunk', (params) => {
      output.write(String(params.chunk));
    });
    try {
      await this.call('HeapProfiler.takeHeapSnapshot', { reportProgress: false });
    } finally {
      this.listeners.delete('HeapProfiler.addHeapSnapshotChunk');
      await new Promise<void>((resolve, reject) =>
        output.end((error?: Error | null) => (error ? reject(error) : resolve())),
      );
    }
  }

  close(): void {
    this.socket.close();
  }
}
