// The Embeddings dialect's translation, directly: `input` into texts, and vectors into OpenAI's
// list body, as floats or as base64 of little-endian float32s.
import { describe, expect, it } from 'vitest';
import { embeddingInputs, embeddingsBody, toBase64 } from './embeddings-dialect.js';

describe('an Embeddings request', () => {
  it('embeds one string, or each of a list', () => {
    expect(embeddingInputs('one')).toEqual(['one']);
    expect(embeddingInputs(['one', 'two'])).toEqual(['one', 'two']);
  });
});

describe('an Embeddings answer', () => {
  const result = {
    embeddings: [
      [0.5, -1],
      [0.25, 2],
    ],
    tokens: 7,
  };

  it('is a list of float vectors by index, with the model and the tokens', () => {
    for (const encoding of [undefined, 'float'] as const) {
      expect(embeddingsBody(result, 'embed-test', encoding)).toEqual({
        object: 'list',
        data: [
          { object: 'embedding', index: 0, embedding: [0.5, -1] },
          { object: 'embedding', index: 1, embedding: [0.25, 2] },
        ],
        model: 'embed-test',
        usage: { prompt_tokens: 7, total_tokens: 7 },
      });
    }
  });

  it('carries base64 of little-endian float32s when asked', () => {
    const body = embeddingsBody(result, 'embed-test', 'base64');
    expect(body.data.map((entry) => entry.embedding)).toEqual([
      toBase64([0.5, -1]),
      toBase64([0.25, 2]),
    ]);
    const bytes = Buffer.from(body.data[0]!.embedding as string, 'base64');
    expect(bytes).toHaveLength(8);
    expect([bytes.readFloatLE(0), bytes.readFloatLE(4)]).toEqual([0.5, -1]);
    // 0.5 as float32 is 0x3f000000: little-endian, its high byte comes last.
    expect([...bytes.subarray(0, 4)]).toEqual([0x00, 0x00, 0x00, 0x3f]);
  });

  it('encodes an empty vector as an empty string', () => {
    expect(toBase64([])).toBe('');
  });
});
