// The executions' change feed between two "instances" (two feeds in this process, each with its own
// connection): a change reaches the other feed's watchers, an instance ignores its own echo, and a
// lost listening connection is re-established — after which every watcher is woken to read again.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ExecutionChangeFeed,
  postgresChangeTransport,
  redisChangeTransport,
  type ChangeTransport,
} from '../src/modules/executions/change-feed.js';
import { openStorage } from '../src/storage/database.js';
import { PostgresListener } from '../src/storage/dialects/postgres-notifications.js';
import {
  allDialects,
  postgresAdminUrl,
  redisTestUrl,
  type TestDatabase,
} from './support/dialects.js';
import { redisReachable } from './support/redis.js';
import pg from 'pg';

const logger = pino({ level: 'silent' });
const withRedis = await redisReachable('execution feed');

interface Backend {
  name: string;
  /** A transport for one instance, and how to cut its listening connection from outside. */
  transport(channel: string): Promise<{ transport: ChangeTransport; cut(): Promise<void> }>;
  cleanup(): Promise<void>;
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

function postgresBackend(): Backend {
  const dialect = allDialects.find((candidate) => candidate.name === 'postgres')!;
  const opened: Array<() => Promise<void>> = [];
  let database: Promise<TestDatabase> | undefined;
  return {
    name: 'postgres',
    async transport(channel) {
      // Both instances use one database, each with its own pool and listening connection.
      database ??= dialect.create().then((created) => {
        opened.push(() => created.drop());
        return created;
      });
      const { url } = await database;
      const storage = await openStorage({ kind: 'postgres', url });
      opened.push(() => storage.close());
      const listener = new PostgresListener({ url, db: storage.db, channel, logger, retryMs: 20 });
      return {
        transport: postgresChangeTransport(listener),
        async cut() {
          const admin = new pg.Client({ connectionString: postgresAdminUrl });
          await admin.connect();
          await admin.query('select pg_terminate_backend($1)', [listener.backendPid]);
          await admin.end();
        },
      };
    },
    async cleanup() {
      while (opened.length > 0) await opened.pop()!();
    },
  };
}

function redisBackend(): Backend {
  const clients: Redis[] = [];
  return {
    name: 'redis',
    async transport(channel) {
      const client = new Redis(redisTestUrl, { lazyConnect: true, enableOfflineQueue: false });
      await client.connect();
      clients.push(client);
      return {
        transport: redisChangeTransport(client, channel, logger),
        async cut() {
          // Both instances' subscribers carry the channel's name: both lose their connection.
          const ids = String(await client.client('LIST'))
            .split('\n')
            .filter((entry) => entry.includes(` name=${channel}-subscriber `))
            .map((entry) => /\bid=(\d+)/.exec(entry)?.[1]);
          expect(ids, 'the subscriber connections are listed by name').toHaveLength(2);
          for (const id of ids) await client.client('KILL', 'ID', id!);
        },
      };
    },
    async cleanup() {
      for (const client of clients) await client.quit();
    },
  };
}

const backends: Array<() => Backend> = [];
if (allDialects.some((dialect) => dialect.name === 'postgres')) backends.push(postgresBackend);
if (withRedis) backends.push(redisBackend);

/** Resolves with the number of wakes seen when `count` have happened, or rejects after `ms`. */
function wakes(feed: ExecutionChangeFeed, id: string) {
  let seen = 0;
  const waiters: Array<{ count: number; resolve: () => void }> = [];
  const stop = feed.watch(id, () => {
    seen += 1;
    for (const waiter of waiters.filter((candidate) => candidate.count <= seen)) waiter.resolve();
  });
  cleanups.push(() => Promise.resolve(stop()));
  return {
    get seen() {
      return seen;
    },
    until(count: number, ms = 3000): Promise<void> {
      if (seen >= count) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`${count} wakes expected, ${seen} seen after ${ms} ms`)),
          ms,
        );
        waiters.push({
          count,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        });
      });
    },
  };
}

describe.each(backends.map((make) => ({ make, name: make().name })))(
  'execution change feed over $name',
  ({ make }) => {
    async function twoInstances() {
      const backend = make();
      cleanups.push(() => backend.cleanup());
      const channel = `test_feed_${randomBytes(6).toString('hex')}`;
      const a = await backend.transport(channel);
      const b = await backend.transport(channel);
      const first = new ExecutionChangeFeed({ transport: a.transport, origin: 'inst_a', logger });
      const second = new ExecutionChangeFeed({ transport: b.transport, origin: 'inst_b', logger });
      await first.start();
      await second.start();
      cleanups.push(
        () => first.close(),
        () => second.close(),
      );
      return { first, second, cutSecond: () => b.cut() };
    }

    it('wakes watchers in both instances once per change, and only watchers of that execution', async () => {
      const { first, second } = await twoInstances();
      const here = wakes(first, 'exec_1');
      const there = wakes(second, 'exec_1');
      const unrelated = wakes(second, 'exec_2');
      first.changed('exec_1');
      expect(here.seen).toBe(1);
      await there.until(1);
      second.changed('exec_1');
      await here.until(2);
      // Each instance's own message comes back through the transport and is ignored.
      await new Promise((resolve) => setTimeout(resolve, 150));
      expect([here.seen, there.seen, unrelated.seen]).toEqual([2, 2, 0]);
    });

    it('re-establishes a lost listening connection and wakes every watcher to read again', async () => {
      const { first, second, cutSecond } = await twoInstances();
      const there = wakes(second, 'exec_3');
      await cutSecond();
      // Woken once the connection is back: changes made meanwhile may have been missed.
      await there.until(1, 5000);
      first.changed('exec_3');
      await there.until(2);
    });
  },
);

it('keeps changes in the process without a transport', () => {
  const feed = new ExecutionChangeFeed({ transport: null, origin: 'inst_x', logger });
  const seen: string[] = [];
  const stop = feed.watch('exec_9', () => seen.push('exec_9'));
  feed.changed('exec_9');
  feed.changed('exec_8');
  stop();
  feed.changed('exec_9');
  expect(seen).toEqual(['exec_9']);
  expect(feed.reach).toBe('process');
});
