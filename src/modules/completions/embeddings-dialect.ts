// OpenAI's Embeddings dialect, translated: a request's `input` into the texts to embed, and the
// vectors into OpenAI's list body (floats, or base64 of little-endian float32s). Plain functions;
// the HTTP side is embeddings.routes.ts.
import type { EmbeddingResult } from '../../models/spec.js';

/** The texts of a request's `input`: one string, or a list of them. */
export function embeddingInputs(input: string | readonly string[]): readonly string[] {
  return typeof input === 'string' ? [input] : input;
}

/** OpenAI's base64 form: the vector's float32 values, little-endian. */
export function toBase64(vector: readonly number[]): string {
  const buffer = Buffer.alloc(vector.length * 4);
  vector.forEach((value, index) => buffer.writeFloatLE(value, index * 4));
  return buffer.toString('base64');
}

/** The embeddings of `model` as OpenAI's list, each vector in the requested encoding. */
export function embeddingsBody(
  result: EmbeddingResult,
  model: string,
  encoding: 'float' | 'base64' | undefined,
) {
  return {
    object: 'list' as const,
    data: result.embeddings.map((vector, index) => ({
      object: 'embedding' as const,
      index,
      embedding: encoding === 'base64' ? toBase64(vector) : vector,
    })),
    model,
    usage: { prompt_tokens: result.tokens, total_tokens: result.tokens },
  };
}
