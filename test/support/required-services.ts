// What happens when a test database or Redis does not answer: outside CI its suites are skipped
// and said so; under CI (CI=true) they are required, so the whole run fails instead.

/** Whether PostgreSQL and Redis must answer: CI runs every dialect and store, never fewer. */
export const servicesRequired = process.env.CI === 'true';

/**
 * Called when a test service does not answer: throws under CI, so every suite that needs it
 * fails with this message; otherwise prints what is skipped (never silently) and returns.
 */
export function serviceMissing(service: string, url: string, skipped: string, fix: string): void {
  if (servicesRequired) {
    throw new Error(
      `${service} at ${url} does not answer. Under CI (CI=true) it is required, so ${skipped} fail instead of being skipped. ${fix}`,
    );
  }
  process.stdout.write(`\n[${service}] ${url} does not answer: ${skipped} SKIPPED. ${fix}\n`);
}
