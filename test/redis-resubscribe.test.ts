// The two Redis subscribers (the executions' change feed, the deployments' health) subscribe again
// after a lost connection, and, closed while that SUBSCRIBE is still unanswered, handle its failure
// themselves: no unhandled rejection, which stops a Node process. ioredis' own resubscription
// (autoResubscribe) left that SUBSCRIBE's promise unhandled: one such "Connection is closed."
// rejection failed a whole run of the suite (a service closed just after Redis came back). A TCP
// proxy before the test Redis drops the connections, and holds the SUBSCRIBE it is told to.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { UpstreamSettings } from '../src/config/config.js';
import { redisChangeTransport } from '../src/modules/executions/change-feed.js';
import { RedisDeploymentHealth } from '../src/models/deployments/redis-deployment-health.js';
import { redisTestUrl } from './support/dialects.js';
import { redisReachable } from './support/redis.js';
import { startTcpProxy } from './support/tcp-proxy.js';

const withRedis = await redisReachable('redis resubscription');
const logger = pino({ level: 'silent' });

/** Commands as the wire carries them (not a name that merely contains the word). */
const subscribeCommand = /\$9\r\nsubscribe\r\n/i;
const quitCommand = /\$4\r\nquit\r\n/i;

/** Until `condition` holds, polling. */
async function until(condition: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await condition())) await new Promise((resolve) => setTimeout(resolve, 20));
}

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

const subscribersUnderTest: Array<{
  name: string;
  /** Starts the subscriber on `client`; returns its channel and how to close it. */
  start: (client: Redis) => Promise<{ channel: string; close(): Promise<void> }>;
}> = [
  {
    name: 'the executions change feed',
    start: async (client) => {
      const channel = `test_resubscribe_${randomBytes(6).toString('hex')}`;
      const transport = redisChangeTransport(client, channel, logger);
      await transport.start({ message: () => undefined, resumed: () => undefined });
      return { channel, close: () => transport.close() };
    },
  },
  {
    name: 'the deployments health',
    start: async (client) => {
      const prefix = `test-resubscribe-${randomBytes(6).toString('hex')}:deployments`;
      const health = new RedisDeploymentHealth(client, prefix, {} as UpstreamSettings, logger);
      await health.start();
      return { channel: `${prefix}:changes`, close: () => health.close() };
    },
  },
];

describe.skipIf(!withRedis).each(subscribersUnderTest)('$name', ({ start }) => {
  it('subscribes again after a lost connection, and closes cleanly while that SUBSCRIBE is unanswered', async () => {
    const unhandled: unknown[] = [];
    const record = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', record);
    cleanups.push(() => Promise.resolve(process.off('unhandledRejection', record)));

    let holdSubscribe = false;
    let held = 0;
    let quitSent = false;
    const proxy = await startTcpProxy(new URL(redisTestUrl), {
      forward: (chunk) => {
        const text = chunk.toString('latin1');
        if (quitCommand.test(text)) quitSent = true;
        if (!holdSubscribe || !subscribeCommand.test(text)) return true;
        holdSubscribe = false;
        held += 1;
        return false;
      },
    });
    cleanups.push(() => proxy.close());
    const client = new Redis(proxy.url, { lazyConnect: true, enableOfflineQueue: false });
    client.on('error', () => undefined);
    await client.connect();
    cleanups.push(() => client.quit().catch(() => client.disconnect()));
    const direct = new Redis(redisTestUrl);
    cleanups.push(() => direct.quit());
    const subscribed = async (count: number) =>
      Number(((await direct.pubsub('NUMSUB', channel)) as [string, number])[1]) === count;

    const subscriber = await start(client);
    const { channel } = subscriber;
    let closed = false;
    cleanups.push(() => (closed ? Promise.resolve() : subscriber.close()));
    await until(() => subscribed(1));

    // A lost connection: once it is back, the subscriber subscribes again by itself.
    proxy.drop();
    await until(() => subscribed(0));
    await until(() => subscribed(1));

    // Lost again, and closed while the reconnection's SUBSCRIBE waits for its answer: closing
    // fails that command ("Connection is closed."), and the subscriber must be the one to handle it.
    holdSubscribe = true;
    proxy.drop();
    await until(() => held === 1);
    const closing = subscriber.close();
    closed = true;
    await until(() => quitSent);
    proxy.drop();
    await closing;
    // A rejection is reported unhandled once the microtasks after it have run.
    await new Promise((resolve) => setImmediate(resolve));
    expect(unhandled).toEqual([]);
  });
});
