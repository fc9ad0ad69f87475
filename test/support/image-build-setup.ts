// The containers project's global setup: the image build starts here, before any test file, and
// runs in the background while the other projects' files do (it is minutes on a fresh machine,
// most of it in podman's own processes); the container test files, which the sequencer starts
// later, wait for it (test/support/containers.ts). Vitest runs a project's global setup only when
// some file of that project is in the run.
import { startBackgroundBuild } from './containers.js';

export default function setup(): Promise<() => Promise<void>> {
  return startBackgroundBuild();
}
