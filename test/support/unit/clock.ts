// A clock a test moves by hand, given to services as their `now`.

export class TestClock {
  constructor(public ms = Date.parse('2031-03-01T12:00:00.000Z')) {}

  readonly now = (): number => this.ms;

  iso(): string {
    return new Date(this.ms).toISOString();
  }

  /**
   * Moves the clock, then lets one timer turn pass: lru-cache (the key and session caches) reuses
   * its last clock reading for a millisecond of real time (its `ttlResolution`), so a cache read
   * in the same instant as the move would still see the old time.
   */
  async advance(ms: number): Promise<void> {
    this.ms += ms;
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}
