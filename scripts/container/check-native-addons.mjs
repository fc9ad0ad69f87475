// Run in the image build, after the runtime stage has its node_modules: loads every native addon
// the service loads, as it loads them, so that an image whose build "succeeded" without them (a
// trimmed file too many, a missing system library) fails to build instead of failing at run time.
// And the packages scripts/container/trim-node-modules.mjs trims, as the service imports them.
// A file, not `node -e`: node-llama-cpp tests its binary in a forked process, which inherits -e.
//
//   node scripts/container/check-native-addons.mjs
const { getLlama } = await import('node-llama-cpp');
const llama = await getLlama({ gpu: false, build: 'never' });
const Database = (await import('better-sqlite3')).default;
const database = new Database(':memory:');
(await import('sqlite-vec')).load(database);
database.close();
await import('sherpa-onnx-node');
const { countTokens } = await import('gpt-tokenizer/encoding/o200k_base');
if (countTokens('hello world') !== 2) throw new Error('gpt-tokenizer counts wrong');
await import('@opentelemetry/sdk-node');
await import('@opentelemetry/api');
for (const name of [
  'ogg-opus-decoder',
  'opus-decoder',
  'mpg123-decoder',
  '@wasm-audio-decoders/flac',
]) {
  await import(name);
}
process.stdout.write(
  `native addons and trimmed packages load (llama.cpp ${llama.gpu === false ? 'CPU' : llama.gpu})\n`,
);
await llama.dispose();
