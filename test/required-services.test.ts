// Under CI the test databases are required: a PostgreSQL or Redis that does not answer fails the
// run (every suite importing the dialect list fails) instead of quietly shrinking it.
import { describe, expect, it } from 'vitest';
import { runModuleScript } from './support/process.js';

// Nothing listens on port 9 of the loopback (the discard port is never served here).
const deadPostgres = 'postgres://nobody@127.0.0.1:9/test';
const deadRedis = 'redis://127.0.0.1:9';
const loadDialects =
  "const { allDialects } = await import('./test/support/dialects.ts'); console.log('dialects:', allDialects.map((d) => d.name).join(','));";
const loadRedis =
  "const { redisReachable } = await import('./test/support/redis.ts'); console.log('redis:', await redisReachable('probe'));";

describe('test services under CI', () => {
  it('fails, naming PostgreSQL and the fix, when it does not answer under CI', async () => {
    const result = await runModuleScript(loadDialects, {
      CI: 'true',
      TEST_POSTGRES_URL: deadPostgres,
    });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain(`PostgreSQL at ${deadPostgres} does not answer`);
    expect(result.stderr).toContain('TEST_POSTGRES_URL');
  });

  it('skips PostgreSQL out loud outside CI', async () => {
    const result = await runModuleScript(loadDialects, { TEST_POSTGRES_URL: deadPostgres });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('SKIPPED');
    expect(result.stdout).toContain('dialects: sqlite\n');
  });

  it('fails when Redis does not answer under CI, and skips it out loud otherwise', async () => {
    const strict = await runModuleScript(loadRedis, { CI: 'true', TEST_REDIS_URL: deadRedis });
    expect(strict.code).not.toBe(0);
    expect(strict.stderr).toContain(`Redis at ${deadRedis} does not answer`);
    const lenient = await runModuleScript(loadRedis, { TEST_REDIS_URL: deadRedis });
    expect(lenient.code, lenient.stderr).toBe(0);
    expect(lenient.stdout).toContain('SKIPPED');
    expect(lenient.stdout).toContain('redis: false');
  });
});
