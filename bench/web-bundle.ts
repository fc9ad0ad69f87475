// The dashboard's initial JavaScript, gzipped: the entry script of web/dist/index.html and every chunk
// it imports statically (the modulepreload links), against the 250 KB budget; the chunks loaded on
// demand (pipeline editor, charts, pages) are listed apart. Results: bench/results/web-bundle.{json,md}.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { machine, writeResults } from './support.js';

export const initialJavaScriptBudgetBytes = 250 * 1000;

export interface BundleMeasurement {
  initial: { file: string; bytes: number; gzipBytes: number }[];
  initialGzipBytes: number;
  initialCss: { file: string; gzipBytes: number }[];
  onDemand: { file: string; gzipBytes: number }[];
  budgetBytes: number;
  withinBudget: boolean;
}

const gzipSize = (content: Buffer) => gzipSync(content, { level: 9 }).length;

export function measureWebBundle(
  distDirectory = fileURLToPath(new URL('../web/dist/', import.meta.url)),
): BundleMeasurement {
  const indexFile = path.join(distDirectory, 'index.html');
  if (!existsSync(indexFile)) {
    throw new Error(`${indexFile} is missing: build the web app first ('npm run build:web').`);
  }
  const html = readFileSync(indexFile, 'utf8');
  const scripts = [...html.matchAll(/<script[^>]+src="\/([^"]+\.js)"/g)].map((match) => match[1]!);
  const preloads = [
    ...html.matchAll(/<link[^>]+rel="modulepreload"[^>]+href="\/([^"]+\.js)"/g),
  ].map((match) => match[1]!);
  const styles = [...html.matchAll(/<link[^>]+rel="stylesheet"[^>]+href="\/([^"]+\.css)"/g)].map(
    (match) => match[1]!,
  );
  const initialFiles = [...new Set([...scripts, ...preloads])];
  const initial = initialFiles.map((file) => {
    const content = readFileSync(path.join(distDirectory, file));
    return { file, bytes: content.length, gzipBytes: gzipSize(content) };
  });
  const initialGzipBytes = initial.reduce((sum, item) => sum + item.gzipBytes, 0);
  const onDemand = readdirSync(path.join(distDirectory, 'assets'))
    .filter((name) => name.endsWith('.js') && !initialFiles.includes(`assets/${name}`))
    .map((name) => ({
      file: `assets/${name}`,
      gzipBytes: gzipSize(readFileSync(path.join(distDirectory, 'assets', name))),
    }))
    .sort((a, b) => b.gzipBytes - a.gzipBytes);
  return {
    initial,
    initialGzipBytes,
    initialCss: styles.map((file) => ({
      file,
      gzipBytes: gzipSize(readFileSync(path.join(distDirectory, file))),
    })),
    onDemand,
    budgetBytes: initialJavaScriptBudgetBytes,
    withinBudget: initialGzipBytes <= initialJavaScriptBudgetBytes,
  };
}

const kb = (bytes: number) => `${(bytes / 1000).toFixed(1)} KB`;

export function runWebBundleBenchmark(): Promise<void> {
  const measurement = measureWebBundle();
  const markdown = [
    '# Dashboard bundle size',
    '',
    `Measured by \`npm run bench -- web-bundle\` on the build in web/dist (gzip level 9, as served with`,
    '`Accept-Encoding: gzip`; brotli copies are smaller still).',
    '',
    `**Initial JavaScript: ${kb(measurement.initialGzipBytes)} gzipped** — budget ${kb(measurement.budgetBytes)}: ${measurement.withinBudget ? 'within' : 'OVER'}.`,
    '',
    '| Initial file | Size | Gzipped |',
    '| --- | ---: | ---: |',
    ...measurement.initial.map(
      (item) => `| ${item.file} | ${kb(item.bytes)} | ${kb(item.gzipBytes)} |`,
    ),
    ...measurement.initialCss.map((item) => `| ${item.file} (CSS) | | ${kb(item.gzipBytes)} |`),
    '',
    'Loaded on demand (largest first; the pipeline editor and the charts among them):',
    '',
    '| Chunk | Gzipped |',
    '| --- | ---: |',
    ...measurement.onDemand.slice(0, 15).map((item) => `| ${item.file} | ${kb(item.gzipBytes)} |`),
    '',
  ].join('\n');
  const file = writeResults('web-bundle', { machine: machine(), ...measurement }, markdown);
  process.stdout.write(`${markdown}\nwritten to ${file}\n`);
  if (!measurement.withinBudget) process.exitCode = 1;
  return Promise.resolve();
}
