// Refreshes test/fixtures/openai/ from OpenAI's published schemas: of each document, the schemas
// the compatibility suites validate against (the roots below) and every schema they reference,
// nothing else. The source is a folder holding the two documents as ../shared/reference does
// (extracted from openai/openai-openapi, MIT); see test/fixtures/openai/README.md.
//
//   node scripts/vendor-openai-schemas.mjs [source folder, default ../shared/reference]
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const source = path.resolve(root, process.argv[2] ?? '../shared/reference');
const target = path.join(root, 'test', 'fixtures', 'openai');

/** The schemas the tests name (test/support/openai-schemas.ts and the suites that use it). */
const roots = {
  'openai-chat-completions.schemas.json': [
    'CreateChatCompletionResponse',
    'CreateChatCompletionStreamResponse',
    'ListModelsResponse',
    'Model',
    'ErrorResponse',
  ],
  'openai-responses-audio.schemas.json': [
    'Response',
    'ResponseStreamEvent',
    'ResponseItemList',
    'ErrorResponse',
    'CreateTranscriptionResponseJson',
    'CreateTranscriptionResponseVerboseJson',
    'ResponseCreatedEvent',
    'ResponseInProgressEvent',
    'ResponseOutputItemAddedEvent',
    'ResponseContentPartAddedEvent',
    'ResponseTextDeltaEvent',
    'ResponseTextDoneEvent',
    'ResponseContentPartDoneEvent',
    'ResponseOutputItemDoneEvent',
    'ResponseFunctionCallArgumentsDeltaEvent',
    'ResponseFunctionCallArgumentsDoneEvent',
    'ResponseCompletedEvent',
    'ResponseIncompleteEvent',
    'ResponseFailedEvent',
    'ResponseErrorEvent',
  ],
};

const prefix = '#/components/schemas/';

/** Every `$ref` into components.schemas that `value` holds, at any depth. */
function references(value, found = new Set()) {
  if (Array.isArray(value)) value.forEach((item) => references(item, found));
  else if (value !== null && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) {
      if (key === '$ref' && typeof inner === 'string') {
        if (!inner.startsWith(prefix)) throw new Error(`a reference out of the schemas: ${inner}`);
        found.add(inner.slice(prefix.length));
      } else references(inner, found);
    }
  }
  return found;
}

for (const [fileName, names] of Object.entries(roots)) {
  const document = JSON.parse(readFileSync(path.join(source, fileName), 'utf8'));
  const all = document.components.schemas;
  const kept = new Set();
  const pending = [...names];
  while (pending.length > 0) {
    const name = pending.pop();
    if (kept.has(name)) continue;
    if (all[name] === undefined) throw new Error(`${fileName} has no schema ${name}`);
    kept.add(name);
    pending.push(...references(all[name]));
  }
  // The document's own order, so that a refresh shows as a small diff.
  const schemas = Object.fromEntries(Object.entries(all).filter(([name]) => kept.has(name)));
  const trimmed = { openapi: document.openapi, info: document.info, components: { schemas } };
  // Written as JSON.stringify lays it out (`.oxfmtrc.json`'s ignorePatterns leave vendored data alone).
  writeFileSync(path.join(target, fileName), `${JSON.stringify(trimmed, null, 2)}\n`);
  process.stdout.write(`${fileName}: ${kept.size} of ${Object.keys(all).length} schemas\n`);
}
