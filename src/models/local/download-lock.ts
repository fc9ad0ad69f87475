// One download per destination at a time, across processes.
import { errorCode, ModelDownloadError } from './download-errors.js';

/** How long a lock left by a stopped process holds (proper-lockfile refreshes a live one). */
export const downloadLockStaleMs = 15_000;

export interface DownloadLock {
  /** Throws when another process took the lock over meanwhile (this one looked stale). */
  assertHeld(): void;
  release(): Promise<void>;
}

/**
 * `<destination>.lock`, held with proper-lockfile: `npm start`'s background pull and
 * `npm run models -- pull` may race for one file. A live holder refreshes the lock; one whose
 * process stopped leaves it stale after `downloadLockStaleMs`, and the next download takes over.
 */
export async function acquireLock(destination: string): Promise<DownloadLock> {
  let compromised: Error | null = null;
  let release: () => Promise<void>;
  try {
    const { default: lockfile } = await import('proper-lockfile');
    release = await lockfile.lock(destination, {
      realpath: false,
      lockfilePath: `${destination}.lock`,
      stale: downloadLockStaleMs,
      update: downloadLockStaleMs / 3,
      retries: 0,
      onCompromised: (error) => {
        compromised = error;
      },
    });
  } catch (error) {
    if (errorCode(error) !== 'ELOCKED') throw error;
    throw new ModelDownloadError(
      'in_progress',
      `Another download into ${destination} is running. Wait for it; a lock left by a stopped process is taken over after ${downloadLockStaleMs / 1000} s.`,
    );
  }
  return {
    assertHeld() {
      if (compromised !== null) {
        throw new ModelDownloadError(
          'in_progress',
          `Another download into ${destination} took over during this one; its file is kept.`,
        );
      }
    },
    release: () => release().catch(() => undefined),
  };
}
