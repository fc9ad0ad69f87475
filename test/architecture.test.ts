// The code's shape, checked: imports run downward only (http/realtime → domain → models, storage,
// text → errors, ids, runtime paths), Fastify stays in the HTTP layer, and only config/ reads the environment.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const sourceRoot = path.resolve(import.meta.dirname, '../src');

/** Layer of a module, by its path under src/ (higher may import lower, never the reverse). */
function layerOf(relative: string): number {
  if (['app.ts', 'services.ts', 'main.ts', 'logger.ts'].includes(relative)) return 5;
  const top = relative.split('/')[0]!;
  if (top === 'cli') return 5;
  if (relative === 'config/config.ts') return 0;
  if (top === 'config') return 4;
  if (top === 'http' || top === 'realtime') return 4;
  if (['errors', 'validation'].includes(top) || ['ids.ts', 'runtime-paths.ts'].includes(relative))
    return 0;
  if (['models', 'storage', 'text', 'audio'].includes(top)) return 1;
  return 2; // the domain: one folder per feature
}

const layerNames = [
  'errors/ids/runtime-paths',
  'models/storage/text/audio',
  'domain',
  '',
  'http/config',
  'wiring',
];

function sourceFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(directory, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [full] : [];
  });
}

interface ImportLine {
  from: string;
  target: string;
  typeOnly: boolean;
}

const importPattern = /^import\s+(type\s+)?(?:[\s\S]*?\s+from\s+)?'([^']+)';/gm;

function importsOf(file: string): ImportLine[] {
  const text = readFileSync(file, 'utf8');
  const from = path.relative(sourceRoot, file);
  return [...text.matchAll(importPattern)].map((match) => ({
    from,
    target: match[2]!.startsWith('.')
      ? path
          .relative(sourceRoot, path.resolve(path.dirname(file), match[2]!))
          .replace(/\.js$/, '.ts')
      : match[2]!,
    typeOnly: match[1] !== undefined,
  }));
}

const files = sourceFiles(sourceRoot);
const imports = files.flatMap(importsOf);

describe('the architecture', () => {
  it('imports only downward at run time; types of the HTTP layer and the wiring stay above the domain', () => {
    const upward = imports
      .filter((line) => !line.target.startsWith('..') && line.target.endsWith('.ts'))
      .filter((line) => layerOf(line.target) > layerOf(line.from))
      // Types may be shared downward-looking too, except that nothing below the HTTP layer may
      // know its types or the wiring's (domain code never sees a request or the Services bag).
      .filter((line) => !line.typeOnly || (layerOf(line.from) < 4 && layerOf(line.target) >= 4))
      .map(
        (line) =>
          `${line.from} (${layerNames[layerOf(line.from)]}) imports ${line.target} (${layerNames[layerOf(line.target)]})${line.typeOnly ? ' as types' : ''}`,
      );
    expect(upward).toEqual([]);
  });

  it('keeps Fastify in the HTTP layer', () => {
    const outside = imports
      .filter((line) => line.target === 'fastify' || line.target.startsWith('@fastify/'))
      .filter((line) => layerOf(line.from) < 4)
      .map((line) => `${line.from} imports ${line.target}`);
    expect(outside).toEqual([]);
  });

  it('reads the environment only in config/', () => {
    const readers = files
      .filter((file) => readFileSync(file, 'utf8').includes('process.env'))
      .map((file) => path.relative(sourceRoot, file))
      .filter((file) => !file.startsWith('config/'));
    expect(readers).toEqual([]);
  });

  it('finds the modules it checks', () => {
    expect(files.length).toBeGreaterThan(80);
    expect(imports.filter((line) => line.target.endsWith('.ts')).length).toBeGreaterThan(300);
  });
});
