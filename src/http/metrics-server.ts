// The separate metrics address (METRICS_PORT): a bare node:http server answering GET /metrics
// without authentication, for a Prometheus on a private network. Everything else is a 404.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { PlatformMetrics } from '../modules/metrics/metrics.js';

export interface MetricsServer {
  /** The port it listens on (the configured one, or the one the system chose for port 0). */
  readonly port: number;
  close(): Promise<void>;
}

export async function startMetricsServer(
  metrics: PlatformMetrics,
  host: string,
  port: number,
): Promise<MetricsServer> {
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    if (path !== '/metrics' || (request.method !== 'GET' && request.method !== 'HEAD')) {
      response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' });
      response.end('Not found: this address serves GET /metrics only.\n');
      return;
    }
    metrics.text().then(
      (text) => {
        response.writeHead(200, { 'content-type': metrics.contentType });
        response.end(request.method === 'HEAD' ? undefined : text);
      },
      () => {
        response.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
        response.end('The metrics could not be collected.\n');
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
