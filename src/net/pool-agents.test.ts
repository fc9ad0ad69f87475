// The keep-alive agents' interned pool key: the same text gives one table entry, the table is
// bounded, connections are still pooled, and Node's `addRequest` gets optimised (the point of it;
// read from V8 in a child process after a count of requests, not timed).
import { execFile } from 'node:child_process';
import { createServer, request, type Agent } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { PooledHttpAgent, announcedIdleMs, internedName, maxInternedNames } from './pool-agents.js';

const repositoryRoot = fileURLToPath(new URL('../../', import.meta.url));

describe('internedName', () => {
  it('keeps one entry per text, whatever string object carries it', () => {
    const names = new Map<string, string>();
    const port = String(4000 + Math.floor(Math.random() * 1000));
    const first = internedName(`127.0.0.1:${port}:`, names);
    const second = internedName(['127.0.0.1', port, ''].join(':'), names);
    expect(second).toBe(first);
    expect(first).toBe(`127.0.0.1:${port}:`);
    expect(names.size).toBe(1);
  });

  it('stops interning past its bound and still answers the text', () => {
    const names = new Map<string, string>();
    for (let index = 0; index < maxInternedNames + 50; index += 1) {
      expect(internedName(`host-${index}:443:`, names)).toBe(`host-${index}:443:`);
    }
    expect(names.size).toBe(maxInternedNames);
  });
});

describe('announcedIdleMs', () => {
  it('reads timeout=N of a Keep-Alive header, whatever its case', () => {
    expect(announcedIdleMs(['Content-Type', 'text/plain', 'Keep-Alive', 'timeout=5, max=9'])).toBe(
      5_000,
    );
    expect(announcedIdleMs(['keep-alive', 'timeout=12'])).toBe(12_000);
  });

  it('is undefined without one, or without its timeout', () => {
    expect(announcedIdleMs(['Connection', 'keep-alive'])).toBeUndefined();
    expect(announcedIdleMs(['Keep-Alive', 'max=5'])).toBeUndefined();
    expect(announcedIdleMs([])).toBeUndefined();
  });
});

/**
 * `count` sequential POSTs through `agent` to a local server (announcing `Keep-Alive:
 * timeout=N` for its `keepAliveMs`); how many connections it saw.
 */
async function connectionsFor(agent: Agent, count: number, keepAliveMs = 5_000): Promise<number> {
  let connections = 0;
  const server = createServer((incoming, outgoing) => {
    incoming.resume();
    incoming.on('end', () => outgoing.end('{}'));
  });
  server.keepAliveTimeout = keepAliveMs;
  server.on('connection', () => (connections += 1));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  try {
    for (let index = 0; index < count; index += 1) {
      await new Promise<void>((resolve, reject) => {
        const outgoing = request(
          { method: 'POST', hostname: '127.0.0.1', port, path: '/', agent },
          (answer) => {
            answer.resume();
            answer.on('end', resolve);
          },
        );
        outgoing.on('error', reject);
        outgoing.end('{}');
      });
    }
  } finally {
    agent.destroy();
    await new Promise((resolve) => server.close(resolve));
  }
  return connections;
}

describe('PooledHttpAgent', () => {
  it('pools connections as Node’s Agent does', async () => {
    const agent = new PooledHttpAgent({ keepAlive: true, timeout: 4_000 });
    expect(await connectionsFor(agent, 5)).toBe(1);
  });

  it('keeps no connection a server announces it keeps a second or less', async () => {
    // `Keep-Alive: timeout=1`: closing a second before the server would leaves nothing.
    const agent = new PooledHttpAgent({ keepAlive: true, timeout: 4_000 });
    expect(await connectionsFor(agent, 3, 1_000)).toBe(3);
  });

  it('lets V8 optimise Node’s addRequest', async () => {
    // In a fresh process (this one's V8 state is shared with other tests): requests in batches
    // until `addRequest` is optimised by TurboFan, or 40 batches of 500 have gone by. With Node
    // 20's own Agent it never is: its key misses V8's cache on every request.
    const script = `
      import http from 'node:http';
      import { PooledHttpAgent } from './src/net/pool-agents.ts';
      const status = new Function('f', 'return %GetOptimizationStatus(f)');
      const turbofanned = 1 << 6;
      const server = http.createServer((incoming, outgoing) => {
        incoming.resume();
        incoming.on('end', () => outgoing.end('{}'));
      });
      await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
      const port = server.address().port;
      const agent = new PooledHttpAgent({ keepAlive: true, timeout: 4000 });
      const one = () => new Promise((resolve, reject) => {
        const outgoing = http.request({ method: 'POST', hostname: '127.0.0.1', port, path: '/', agent }, (answer) => {
          answer.resume();
          answer.on('end', resolve);
        });
        outgoing.on('error', reject);
        outgoing.end('{}');
      });
      let batches = 0;
      while (batches < 40 && (status(http.Agent.prototype.addRequest) & turbofanned) === 0) {
        for (let index = 0; index < 500; index += 1) await one();
        batches += 1;
      }
      process.stdout.write(JSON.stringify({ batches, optimised: (status(http.Agent.prototype.addRequest) & turbofanned) !== 0 }));
      agent.destroy();
      server.close();
    `;
    const output = await new Promise<string>((resolve, reject) =>
      execFile(
        process.execPath,
        ['--allow-natives-syntax', '--import', 'tsx', '--input-type=module', '-e', script],
        { cwd: repositoryRoot },
        (error, stdout, stderr) => (error === null ? resolve(stdout) : reject(new Error(stderr))),
      ),
    );
    const result = JSON.parse(output) as { batches: number; optimised: boolean };
    expect(result.optimised).toBe(true);
  });
});
