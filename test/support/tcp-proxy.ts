// A TCP proxy in front of a real service (the test Redis), which a test can take down and bring
// back on the same port: an outage of that service as the platform sees it, without touching the
// service itself (other suites share it).
import net from 'node:net';

export interface TcpProxy {
  readonly port: number;
  readonly url: string;
  /** Cuts every connection and stops listening: connecting is refused until `open()`. */
  close(): Promise<void>;
  /** Listens again on the same port. */
  open(): Promise<void>;
  /** Cuts every connection and goes on listening: a dropped connection, not an outage. */
  drop(): void;
}

export interface TcpProxyOptions {
  /**
   * Sees each chunk a client sends; false holds that connection: the chunk and all the client sends
   * after it never reach the service (a service that stopped answering on that connection).
   */
  forward?: (chunk: Buffer) => boolean;
}

export async function startTcpProxy(target: URL, options: TcpProxyOptions = {}): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>();
  let server: net.Server | null = null;
  let port = 0;
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      const created = net.createServer((client) => {
        const upstream = net.connect(Number(target.port || 6379), target.hostname);
        for (const socket of [client, upstream]) {
          sockets.add(socket);
          socket.on('close', () => sockets.delete(socket));
          socket.on('error', () => undefined);
        }
        const { forward } = options;
        if (forward === undefined) {
          client.pipe(upstream);
        } else {
          let held = false;
          client.on('data', (chunk: Buffer) => {
            // Every chunk is shown, those after a held one too.
            const passes = forward(chunk);
            held ||= !passes;
            if (!held) upstream.write(chunk);
          });
        }
        upstream.pipe(client);
        client.on('close', () => upstream.destroy());
        upstream.on('close', () => client.destroy());
      });
      created.once('error', reject);
      created.listen(port, '127.0.0.1', () => {
        port = (created.address() as net.AddressInfo).port;
        server = created;
        resolve();
      });
    });
  await listen();
  return {
    get port() {
      return port;
    },
    get url() {
      const url = new URL(target.toString());
      url.hostname = '127.0.0.1';
      url.port = String(port);
      return url.toString();
    },
    async close() {
      const closing = server;
      server = null;
      for (const socket of sockets) socket.destroy();
      if (closing !== null) await new Promise<void>((resolve) => closing.close(() => resolve()));
    },
    open: listen,
    drop() {
      for (const socket of sockets) socket.destroy();
    },
  };
}
