// Where the service's own files are, the same whether it runs from the TypeScript sources (tsx,
// vitest) or from the bundle in dist/ (scripts/build-server.mjs), where this module's code sits in
// dist/main.js or in one of dist/chunks/.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(import.meta.url);

/** True under tsx and vitest (the .ts sources), false in the built service. */
const fromSource = here.endsWith('.ts');

/** The built service's directory (dist/): the one holding main.js and chunks/. */
export const bundleDirectory = fromSource
  ? null
  : path.basename(path.dirname(here)) === 'chunks'
    ? path.dirname(path.dirname(here))
    : path.dirname(here);

function findPackageRoot(): string {
  for (let directory = path.dirname(here); ; directory = path.dirname(directory)) {
    const manifest = path.join(directory, 'package.json');
    if (existsSync(manifest)) {
      const { name } = JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string };
      if (name === 'conversational-ai-platform') return directory;
    }
    if (path.dirname(directory) === directory) {
      throw new Error(`The service's package.json was not found above ${here}.`);
    }
  }
}

/** The directory of the service's package.json (the repository's root). */
export const packageRoot = findPackageRoot();
