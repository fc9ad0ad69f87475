// A second baseline for the gateway benchmark: the least a Fastify service can do as a gateway —
// one route that parses the JSON body, rewrites the model, forwards it over a keep-alive agent and
// returns the parsed answer with its model renamed. No keys, limits, hooks, validation or log: the
// floor under the platform's own work, which is built on Fastify.
import { Agent, request } from 'node:http';
import Fastify from 'fastify';

const port = Number(process.argv[2] ?? 0);
const upstream = new URL(`${process.argv[3] ?? 'http://127.0.0.1:1/v1'}/chat/completions`);
const agent = new Agent({ keepAlive: true });

function forward(body: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const outgoing = request(
      {
        hostname: upstream.hostname,
        port: upstream.port,
        path: upstream.pathname,
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (answer) => {
        let text = '';
        answer.setEncoding('utf8');
        answer.on('data', (part: string) => (text += part));
        answer.on('end', () => resolve(text));
        answer.on('error', reject);
      },
    );
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

const app = Fastify({ logger: false, keepAliveTimeout: 72_000 });
app.get('/', () => 'ok');
app.post('/chat/completions', async (incoming) => {
  const body = incoming.body as Record<string, unknown>;
  const answer = JSON.parse(await forward(JSON.stringify({ ...body, model: 'gpt-4o-mini' }))) as {
    model: string;
  };
  return { ...answer, model: String(body.model) };
});
await app.listen({ port, host: '127.0.0.1' });
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
