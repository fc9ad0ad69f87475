// A clock a test moves by hand, given to services as their `now`.

export class TestClock {
  constructor(public ms = Date.parse('2031-03-01T12:00:00.000Z')) {}

  readonly now = (): number => this.ms;

  iso(): string {
    return new Date(this.ms).toISOString();
  }

  /**
   * Moves the clock. The key and session caches read it at every lookup (ttlResolution 0), so a
   * read in the same instant as the move sees the new time (async: callers await it).
   */
  advance(ms: number): Promise<void> {
    this.ms += ms;
    return Promise.resolve();
  }
}
