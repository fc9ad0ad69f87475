// How a computation's cost grows with its input, as an exponent measured in the run itself: the
// least CPU time of a few runs at size n and at 4n. Linear work gives ~1, quadratic ~2, whatever the
// machine's speed today. CPU time (the process's, from getrusage) rather than elapsed time, so that
// waiting for a core on a loaded machine does not count: "linear" is asserted as an exponent,
// never as milliseconds.

/** The least CPU time, in milliseconds, of `runs` runs of a synchronous `work`. */
export function cpuFastest(work: () => unknown, runs = 3): number {
  let fastest = Infinity;
  for (let run = 0; run < runs; run += 1) {
    const before = process.cpuUsage();
    work();
    const used = process.cpuUsage(before);
    fastest = Math.min(fastest, (used.user + used.system) / 1000);
  }
  return fastest;
}

/**
 * log4(cost(4n) / cost(n)) for `work(size)`. `n` should make `work(n)` cost at least ~20 ms of
 * CPU, so that the clock's granularity and fixed costs do not dominate.
 */
export function growthExponent(work: (size: number) => unknown, n: number): number {
  work(n); // warm up (JIT, lazy loading)
  const small = cpuFastest(() => work(n));
  const large = cpuFastest(() => work(4 * n));
  return Math.log(large / Math.max(small, 0.001)) / Math.log(4);
}

/** The bound tests assert: comfortably above linear (1) and below quadratic (2). */
export const linearExponent = 1.6;
