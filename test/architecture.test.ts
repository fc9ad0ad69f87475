// The code's shape, checked. Layers, highest first; imports run downward only at run time:
//   5 wiring      app.ts, services.ts, service-modules.ts, service-container.ts, main.ts, logger.ts,
//                 cli/, and each modules/<area>/module.ts
//   4 HTTP/config http/, config/ (but config/config.ts, its sections and the kit), and
//                 modules/<area>/*.routes.ts and *.schemas.ts: the only files that may import Fastify
//   2 domain      one folder per feature (accounts/, agents/, …), and every other file of a module
//   1 platform    models/, storage/, text/, audio/, net/, and modules/<area>/*.repository.ts (whose run-time
//                 imports are storage/, errors/, ids.ts, validation/ and packages alone)
//   0 base        errors/, validation/, ids.ts, runtime-paths.ts, config/config.ts and its sections
//                 (config/config-sections.ts, config/model-types.ts, config/cache-config.ts), the configuration kit (config/config-kit.ts,
//                 config-problems.ts), and modules/<area>/*.config.ts (an area's configuration
//                 piece: it imports packages and the kit alone; load-config composes the pieces)
// A feature module (modules/<area>/) holds one area's layers side by side, each file's layer read
// from its name; another module reaches it only through its module.ts, or its types. Only config/
// reads the environment.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const sourceRoot = path.resolve(import.meta.dirname, '../src');

/** The configuration's types, which every layer receives. */
const configTypes = [
  'config/config.ts',
  'config/config-sections.ts',
  'config/model-types.ts',
  'config/cache-config.ts',
];

/** The configuration kit: what a module's configuration piece may import besides packages. */
const configKit = ['config/config-kit.ts', 'config/config-problems.ts'];

/** The area of a file under modules/<area>/, or null for a file outside the feature modules. */
function moduleOf(relative: string): string | null {
  const [top, area] = relative.split('/');
  return top === 'modules' && area !== undefined && area.length > 0 ? area : null;
}

/** Layer of a module's file, by its role suffix. */
function moduleLayerOf(relative: string): number {
  const name = path.basename(relative);
  if (name === 'module.ts') return 5;
  if (name.endsWith('.routes.ts') || name.endsWith('.schemas.ts')) return 4;
  if (name.endsWith('.repository.ts')) return 1;
  if (name.endsWith('.config.ts')) return 0;
  return 2;
}

/** Layer of a module, by its path under src/ (higher may import lower, never the reverse). */
function layerOf(relative: string): number {
  if (moduleOf(relative) !== null) return moduleLayerOf(relative);
  const wiring = ['app.ts', 'services.ts', 'service-modules.ts', 'service-container.ts', 'main.ts'];
  if ([...wiring, 'logger.ts'].includes(relative)) return 5;
  const top = relative.split('/')[0]!;
  if (top === 'cli') return 5;
  if (configTypes.includes(relative) || configKit.includes(relative)) return 0;
  if (top === 'config') return 4;
  if (top === 'http') return 4;
  if (['errors', 'validation'].includes(top) || ['ids.ts', 'runtime-paths.ts'].includes(relative))
    return 0;
  if (['models', 'storage', 'text', 'audio', 'net', 'telemetry'].includes(top)) return 1;
  return 2; // the domain: one folder per feature
}

const layerNames = [
  'errors/validation/ids/runtime-paths/config kit',
  'models/storage/text/audio/net/telemetry',
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
const isFastify = (target: string) => target === 'fastify' || target.startsWith('@fastify/');

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

  it('has no import circle between files, type-only imports and re-exports included', () => {
    const reexportPattern = /^export\s+(?:type\s+)?\{[\s\S]*?\}\s+from\s+'(\.[^']+)';/gm;
    const edges = new Map<string, string[]>();
    for (const line of imports) {
      if (!line.target.endsWith('.ts')) continue;
      edges.set(line.from, [...(edges.get(line.from) ?? []), line.target]);
    }
    for (const file of files) {
      const from = path.relative(sourceRoot, file);
      for (const match of readFileSync(file, 'utf8').matchAll(reexportPattern)) {
        const target = path
          .relative(sourceRoot, path.resolve(path.dirname(file), match[1]!))
          .replace(/\.js$/, '.ts');
        edges.set(from, [...(edges.get(from) ?? []), target]);
      }
    }
    // Depth-first, marking each file on the current path: an edge back to one is a circle.
    const state = new Map<string, 'open' | 'done'>();
    const circles: string[] = [];
    const visit = (file: string, trail: string[]) => {
      state.set(file, 'open');
      for (const target of edges.get(file) ?? []) {
        if (state.get(target) === 'open') {
          circles.push([...trail.slice(trail.indexOf(target)), file, target].join(' → '));
        } else if (!state.has(target)) {
          visit(target, [...trail, file]);
        }
      }
      state.set(file, 'done');
    };
    for (const file of edges.keys()) if (!state.has(file)) visit(file, []);
    expect(circles).toEqual([]);
  });

  it('keeps Fastify in the HTTP layer', () => {
    const outside = imports
      .filter((line) => isFastify(line.target))
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

describe('the feature modules', () => {
  const moduleImports = imports.filter((line) => moduleOf(line.from) !== null);

  it('each has a module.ts that wires it', () => {
    const areas = new Set(files.map((file) => moduleOf(path.relative(sourceRoot, file))));
    areas.delete(null);
    expect(areas.size).toBeGreaterThan(0);
    const unwired = [...areas].filter(
      (area) => !files.includes(path.join(sourceRoot, 'modules', area!, 'module.ts')),
    );
    expect(unwired).toEqual([]);
  });

  it('import Fastify only in their *.routes.ts and *.schemas.ts', () => {
    const outside = moduleImports
      .filter((line) => isFastify(line.target) && moduleLayerOf(line.from) !== 4)
      .map((line) => `${line.from} imports ${line.target}`);
    expect(outside).toEqual([]);
  });

  it("keep a repository's run-time imports to storage/, errors/, ids.ts, validation/ and packages", () => {
    const allowed = (target: string) =>
      !target.endsWith('.ts') ||
      target === 'ids.ts' ||
      ['storage/', 'errors/', 'validation/'].some((folder) => target.startsWith(folder));
    const reaching = moduleImports
      .filter((line) => moduleLayerOf(line.from) === 1 && !line.typeOnly)
      .filter((line) => !allowed(line.target))
      .map((line) => `${line.from} imports ${line.target}`);
    expect(reaching).toEqual([]);
  });

  it('keep their configuration piece (*.config.ts) to packages and the configuration kit', () => {
    const pieces = files
      .map((file) => path.relative(sourceRoot, file))
      .filter((file) => moduleOf(file) !== null && file.endsWith('.config.ts'));
    expect(pieces.length).toBeGreaterThan(0);
    const reaching = moduleImports
      .filter((line) => line.from.endsWith('.config.ts'))
      .filter((line) => line.target.endsWith('.ts') && !configKit.includes(line.target))
      .map((line) => `${line.from} imports ${line.target}${line.typeOnly ? ' as types' : ''}`);
    expect(reaching).toEqual([]);
  });

  it('reach another module only through its module.ts, or its types', () => {
    const through = moduleImports
      .filter((line) => {
        const other = moduleOf(line.target);
        return other !== null && other !== moduleOf(line.from);
      })
      .filter((line) => !line.typeOnly && path.basename(line.target) !== 'module.ts')
      .map((line) => `${line.from} imports ${line.target}`);
    expect(through).toEqual([]);
  });
});
