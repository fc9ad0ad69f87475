import { describe, expect, it } from 'vitest';
import { Closers } from './closers.js';

describe('Closers', () => {
  it('closes last-added first, each once, however often closeAll is called', async () => {
    const closed: string[] = [];
    const closers = new Closers();
    for (const name of ['storage', 'redis', 'text'])
      closers.add(name, () => void closed.push(name));
    expect(closers.pending).toEqual(['text', 'redis', 'storage']);
    await Promise.all([closers.closeAll(), closers.closeAll()]);
    await closers.closeAll();
    expect(closed).toEqual(['text', 'redis', 'storage']);
    expect(() => closers.add('late', () => undefined)).toThrow(/already closing/);
  });

  it('runs every closer when some fail, then reports each failure by name', async () => {
    const closed: string[] = [];
    const closers = new Closers();
    closers.add('storage', () => void closed.push('storage'));
    closers.add('feed', () => Promise.reject(new Error('socket gone')));
    closers.add('engine', () => {
      throw new Error('busy');
    });
    const failure = await closers.closeAll().then(
      () => null,
      (error: unknown) => error,
    );
    expect(closed).toEqual(['storage']);
    expect(failure).toBeInstanceOf(AggregateError);
    const errors = (failure as AggregateError).errors as Error[];
    expect(errors.map((error) => error.message)).toEqual([
      'closing engine failed',
      'closing feed failed',
    ]);
    expect((errors[1]!.cause as Error).message).toBe('socket gone');
  });

  it('throws a single failure as itself', async () => {
    const closers = new Closers();
    closers.add('only', () => Promise.reject(new Error('no')));
    await expect(closers.closeAll()).rejects.toThrow('closing only failed');
  });
});
