// The baseline for the gateway benchmark: a bare Node keep-alive proxy that pipes each request to
// the upstream's /chat/completions and the answer back, untouched — no keys, no parsing, no log.
// What any gateway must at least pay; /chat/completions is compared with it and with no proxy.
import { Agent, createServer, request } from 'node:http';

const port = Number(process.argv[2] ?? 0);
const upstream = new URL(`${process.argv[3] ?? 'http://127.0.0.1:1/v1'}/chat/completions`);
const agent = new Agent({ keepAlive: true });

const server = createServer((incoming, outgoing) => {
  if (incoming.method !== 'POST') {
    outgoing.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    return;
  }
  const forwarded = request(
    {
      hostname: upstream.hostname,
      port: upstream.port,
      path: upstream.pathname,
      method: 'POST',
      agent,
      headers: {
        'content-type': 'application/json',
        ...(incoming.headers['content-length'] === undefined
          ? {}
          : { 'content-length': incoming.headers['content-length'] }),
      },
    },
    (answer) => {
      outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(outgoing);
    },
  );
  forwarded.on('error', () => outgoing.destroy());
  outgoing.on('close', () => {
    if (!outgoing.writableFinished) forwarded.destroy();
  });
  incoming.pipe(forwarded);
});
server.keepAliveTimeout = 72_000;
server.listen(port, '127.0.0.1');
process.on('SIGTERM', () => server.close(() => process.exit(0)));
