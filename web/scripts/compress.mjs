// Writes a .br and a .gz copy of every built asset, so the service sends them compressed without
// compressing on each request (@fastify/static's preCompressed).
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

const root = path.join(path.dirname(new URL(import.meta.url).pathname), '..', 'dist', 'assets');
let count = 0;
for (const name of readdirSync(root)) {
  const file = path.join(root, name);
  if (!/\.(js|css|svg|json|html|txt|map)$/.test(name) || statSync(file).size < 1024) continue;
  const content = readFileSync(file);
  writeFileSync(`${file}.gz`, gzipSync(content, { level: 9 }));
  writeFileSync(
    `${file}.br`,
    brotliCompressSync(content, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }),
  );
  count += 1;
}
process.stdout.write(`compressed ${count} assets (.br, .gz)\n`);
