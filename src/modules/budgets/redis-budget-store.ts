// The budgets' store on Redis: each window of a budget is a hash (`spent`, `reserved`, and one
// `r:<reservation>` field per call under way) and a sorted set of the reservations' deadlines,
// under a key that names the window (`…budget:{acct_…}:bud_…:m2026-11`), so a new period starts
// from nothing and the old one expires on its own after its reset — nothing sweeps. A call's
// reservation on all its budgets is one Lua script: it checks every window and reserves on every
// one, or on none, so instances sharing the Redis reserve exactly. A window not in Redis (first
// use, a flush, an expiry) is seeded from the ledger first. The account's id in braces keeps a
// call's keys in one slot of a Redis cluster.
import type { Redis } from 'ioredis';
import type {
  BudgetStore,
  Reservation,
  ReserveOutcome,
  WindowLine,
  WindowState,
} from './budget-store.js';

/** Drops the reservations whose deadline passed (their instance died): their amounts are freed. */
const expireStale = `
local function expireStale(hash, deadlines, now)
  local stale = redis.call('ZRANGEBYSCORE', deadlines, '-inf', now)
  for _, id in ipairs(stale) do
    local amount = tonumber(redis.call('HGET', hash, 'r:' .. id) or '0')
    redis.call('HDEL', hash, 'r:' .. id)
    redis.call('HINCRBY', hash, 'reserved', -amount)
  end
  if #stale > 0 then redis.call('ZREMRANGEBYSCORE', deadlines, '-inf', now) end
end
`;

/**
 * KEYS: hash and deadlines of each window. ARGV: now, reservation id, amount, its deadline, then
 * per window: limit, soft limit (-1: none), seconds to keep the keys (0: for ever), seed (-1: not
 * read). Answers {'seed', i…} when a window is missing and has no seed, {'refused', i, spent}, or
 * {'reserved', i…} listing the windows past their soft limit.
 */
const reserveScript = `${expireStale}
local now, id, amount, deadline = tonumber(ARGV[1]), ARGV[2], tonumber(ARGV[3]), ARGV[4]
local count = #KEYS / 2
local missing = {}
for i = 1, count do
  if redis.call('EXISTS', KEYS[2 * i - 1]) == 0 and tonumber(ARGV[4 + 4 * i]) < 0 then
    table.insert(missing, i)
  end
end
if #missing > 0 then return {'seed', unpack(missing)} end
local spent, reserved = {}, {}
for i = 1, count do
  local hash = KEYS[2 * i - 1]
  redis.call('HSETNX', hash, 'spent', ARGV[4 + 4 * i])
  redis.call('HSETNX', hash, 'reserved', 0)
  expireStale(hash, KEYS[2 * i], now)
  spent[i] = tonumber(redis.call('HGET', hash, 'spent'))
  reserved[i] = tonumber(redis.call('HGET', hash, 'reserved'))
  if amount > 0 and spent[i] + reserved[i] + amount > tonumber(ARGV[1 + 4 * i]) then
    return {'refused', i, tostring(spent[i])}
  end
end
local warnings = {'reserved'}
for i = 1, count do
  local hash, deadlines, ttl = KEYS[2 * i - 1], KEYS[2 * i], tonumber(ARGV[3 + 4 * i])
  redis.call('HINCRBY', hash, 'reserved', amount)
  redis.call('HSET', hash, 'r:' .. id, amount)
  redis.call('ZADD', deadlines, deadline, id)
  if ttl > 0 then
    redis.call('EXPIRE', hash, ttl)
    redis.call('EXPIRE', deadlines, ttl)
  end
  local soft = tonumber(ARGV[2 + 4 * i])
  if soft >= 0 and spent[i] + reserved[i] + amount >= soft then table.insert(warnings, i) end
end
return warnings
`;

/** KEYS as above. ARGV: reservation id, cost. A window no longer in Redis is left to its seed. */
const settleScript = `
local id, cost = ARGV[1], tonumber(ARGV[2])
for i = 1, #KEYS / 2 do
  local hash = KEYS[2 * i - 1]
  if redis.call('EXISTS', hash) == 1 then
    local amount = redis.call('HGET', hash, 'r:' .. id)
    if amount then
      redis.call('HDEL', hash, 'r:' .. id)
      redis.call('HINCRBY', hash, 'reserved', -tonumber(amount))
      redis.call('ZREM', KEYS[2 * i], id)
    end
    redis.call('HINCRBY', hash, 'spent', cost)
  end
end
return 1
`;

type ScriptReply = Array<string | number>;

interface BudgetCommands {
  budgetReserve(numberOfKeys: number, ...args: Array<string | number>): Promise<ScriptReply>;
  budgetSettle(numberOfKeys: number, ...args: Array<string | number>): Promise<number>;
}

/** A window's keys are kept this long after it resets (then Redis drops them). */
const keptAfterResetSeconds = 86_400;

export class RedisBudgetStore implements BudgetStore {
  private readonly commands: BudgetCommands;

  constructor(
    redis: Redis,
    private readonly keyOf: (name: string) => string,
  ) {
    redis.defineCommand('budgetReserve', { lua: reserveScript });
    redis.defineCommand('budgetSettle', { lua: settleScript });
    this.commands = redis as unknown as BudgetCommands;
  }

  async reserve(
    lines: readonly WindowLine[],
    reservation: Reservation,
    nowMs: number,
  ): Promise<ReserveOutcome> {
    const seeds: number[] = lines.map(() => -1);
    // At most twice: the second time with the seeds of the windows Redis did not have.
    for (;;) {
      const reply = await this.commands.budgetReserve(
        lines.length * 2,
        ...this.keysOf(lines),
        nowMs,
        reservation.id,
        reservation.amountMicros,
        reservation.expiresAtMs,
        ...lines.flatMap((line, index) => [
          line.limitMicros,
          line.softLimitMicros ?? -1,
          ttlOf(line, nowMs),
          seeds[index]!,
        ]),
      );
      const [kind, ...rest] = reply;
      if (kind === 'refused') {
        return { kind: 'refused', line: Number(rest[0]) - 1, spentMicros: Number(rest[1]) };
      }
      if (kind === 'reserved') {
        return { kind: 'reserved', warnings: rest.map((index) => Number(index) - 1) };
      }
      for (const index of rest.map((value) => Number(value) - 1)) {
        seeds[index] = Math.max(0, await lines[index]!.seed());
      }
    }
  }

  async settle(
    lines: readonly WindowLine[],
    reservationId: string,
    costMicros: number,
  ): Promise<void> {
    await this.commands.budgetSettle(
      lines.length * 2,
      ...this.keysOf(lines),
      reservationId,
      costMicros,
    );
  }

  async state(line: WindowLine): Promise<WindowState> {
    const client = this.commands as unknown as Redis;
    const [spent, reserved] = await client.hmget(this.keysOf([line])[0]!, 'spent', 'reserved');
    if (spent === null || spent === undefined) {
      return { spentMicros: await line.seed(), reservedMicros: 0 };
    }
    return { spentMicros: Number(spent), reservedMicros: Number(reserved ?? 0) };
  }

  private keysOf(lines: readonly WindowLine[]): string[] {
    return lines.flatMap((line) => {
      const hash = this.keyOf(`budget:{${line.accountId}}:${line.budgetId}:${line.window}`);
      return [hash, `${hash}:deadlines`];
    });
  }
}

/** Seconds to keep a window's keys: until a day after it resets; 0 (for ever) for `total`. */
function ttlOf(line: WindowLine, nowMs: number): number {
  if (line.resetsAtMs === null) return 0;
  return Math.ceil((line.resetsAtMs - nowMs) / 1000) + keptAfterResetSeconds;
}
