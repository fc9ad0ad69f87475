// The upstream calls one request may make in all (`max_attempts`): every call to a deployment, to
// a fallback model and every retry of one takes an attempt from the same budget, so that retries
// of retries never multiply (a model of three deployments with two fallbacks, each retrying twice,
// would otherwise make 27 calls for one request).

export class AttemptBudget {
  private used = 0;

  constructor(readonly limit: number) {}

  /** Whether another upstream call may be made. */
  get left(): number {
    return Math.max(0, this.limit - this.used);
  }

  /** Takes one attempt; false when none is left (the call is then not made). */
  take(): boolean {
    if (this.used >= this.limit) return false;
    this.used += 1;
    return true;
  }

  /** Upstream calls made so far. */
  get taken(): number {
    return this.used;
  }
}
