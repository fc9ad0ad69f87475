// Generates a tiny random-weight llama GGUF with a ChatML-ready SPM vocabulary for engine tests.
import { GgmlType, writeGgufFile, type GgufMetadataValue, type GgufTensor } from './gguf-writer.js';

/** Special token strings, for tests that build prompts by hand or check what was generated. */
export const tinyLlamaSpecialTokens = {
  unknown: '<unk>',
  beginOfSequence: '<s>',
  endOfText: '</s>',
  imStart: '<|im_start|>',
  imEnd: '<|im_end|>',
} as const;

/** Fixed ids: tests may rely on them, e.g. to bias or forbid a token. */
export const tinyLlamaTokenIds = {
  unknown: 0,
  beginOfSequence: 1,
  endOfText: 2,
  /** `<0x00>`; byte b is `firstByte + b`. */
  firstByte: 3,
  imStart: 259,
  /** Also the EOS token, so chat generation ends where a ChatML turn ends. */
  imEnd: 260,
} as const;

/** The usual ChatML template, as Qwen and many fine-tunes ship it in `tokenizer.chat_template`. */
export const tinyLlamaChatTemplate =
  '{% for message in messages %}' +
  "{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}" +
  '{% endfor %}' +
  "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

export const tinyLlamaDefaults = {
  seed: 1,
  embeddingLength: 64,
  blockCount: 2,
  contextLength: 512,
  headCount: 4,
  headCountKv: 2,
  feedForwardLength: 128,
  name: 'tiny-random-chatml',
} as const;

export interface TinyLlamaOptions {
  /** Seed of the weight PRNG: the same options always give a byte-identical file. */
  seed?: number;
  embeddingLength?: number;
  blockCount?: number;
  contextLength?: number;
  headCount?: number;
  /** Below headCount by default: grouped-query attention, as in most current models. */
  headCountKv?: number;
  feedForwardLength?: number;
  name?: string;
  /** `tokenizer.chat_template`; the ChatML one by default. */
  chatTemplate?: string;
  /**
   * Control tokens appended after the whole vocabulary (so every other id stays as documented),
   * e.g. a template's `<tool_call>` marker that a test biases the model towards.
   */
  extraControlTokens?: readonly string[];
}

// SentencePiece's word-boundary marker; the tokenizer turns spaces into it before lookup.
const wordBoundary = '\u2581';

// Words are stored with every prefix ("▁h", "▁he", …) because SPM only merges adjacent pieces that
// are themselves in the vocabulary, so a whole-word token is unreachable without its prefix chain.
const words = (
  'hello world the and you are is how what user assistant system chat model test reply answer ' +
  'question yes no ok'
).split(' ');

// SPM token types, as llama.cpp's `llama_token_type`.
const tokenType = { normal: 1, unknown: 2, control: 3, byte: 6 } as const;

interface Vocabulary {
  tokens: string[];
  scores: number[];
  types: number[];
}

function buildVocabulary(extraControlTokens: readonly string[]): Vocabulary {
  const vocabulary: Vocabulary = { tokens: [], scores: [], types: [] };
  const add = (token: string, type: number, score = 0): void => {
    vocabulary.tokens.push(token);
    vocabulary.types.push(type);
    vocabulary.scores.push(score);
  };
  add(tinyLlamaSpecialTokens.unknown, tokenType.unknown);
  add(tinyLlamaSpecialTokens.beginOfSequence, tokenType.control);
  add(tinyLlamaSpecialTokens.endOfText, tokenType.control);
  // Byte fallback: any UTF-8 the pieces below cannot cover still round-trips exactly.
  for (let byte = 0; byte < 256; byte++) {
    add(`<0x${byte.toString(16).toUpperCase().padStart(2, '0')}>`, tokenType.byte);
  }
  add(tinyLlamaSpecialTokens.imStart, tokenType.control);
  add(tinyLlamaSpecialTokens.imEnd, tokenType.control);

  const pieces = new Set<string>([wordBoundary]);
  for (let code = 0x21; code <= 0x7e; code++) pieces.add(String.fromCharCode(code));
  for (const word of words) {
    for (let length = 1; length <= word.length; length++) {
      pieces.add(wordBoundary + word.slice(0, length));
    }
  }
  // Falling scores mimic SentencePiece's log-probabilities; only their order matters for merges.
  let rank = 0;
  for (const piece of pieces) add(piece, tokenType.normal, -++rank);
  for (const token of extraControlTokens) add(token, tokenType.control);
  return vocabulary;
}

/** Mulberry32: tiny, fast and deterministic, so regenerated files are byte-identical. */
function createRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let mixed = state;
    mixed = Math.imul(mixed ^ (mixed >>> 15), mixed | 1);
    mixed ^= mixed + Math.imul(mixed ^ (mixed >>> 7), mixed | 61);
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Writes the model to `filePath`. With the defaults the file is about 0.5 MB and loads and
 * generates in milliseconds on one CPU thread; its output is noise, but well-formed noise.
 */
export async function writeTinyLlamaGguf(
  filePath: string,
  options: TinyLlamaOptions = {},
): Promise<void> {
  const settings = { ...tinyLlamaDefaults, ...options };
  const { embeddingLength, headCount, headCountKv, feedForwardLength } = settings;
  const headDimension = embeddingLength / headCount;
  // llama.cpp asserts on these at load time with messages that do not name the cause.
  if (!Number.isInteger(headDimension) || headDimension % 2 !== 0) {
    throw new Error('embeddingLength must split into an even head size per attention head');
  }
  if (headCount % headCountKv !== 0) {
    throw new Error('headCount must be a multiple of headCountKv');
  }

  const vocabulary = buildVocabulary(options.extraControlTokens ?? []);
  const vocabularySize = vocabulary.tokens.length;
  const random = createRandom(settings.seed);

  // ggml's mul_mat contracts over dimension 0, so that is each matrix's fan-in; scaling by
  // 1/sqrt(fan-in) keeps activations around unit size instead of overflowing after a few layers.
  const matrix = (name: string, fanIn: number, fanOut: number, gain = 1): GgufTensor => {
    const data = new Float32Array(fanIn * fanOut);
    const bound = gain / Math.sqrt(fanIn);
    for (let index = 0; index < data.length; index++) data[index] = (random() * 2 - 1) * bound;
    return { name, dimensions: [fanIn, fanOut], type: GgmlType.F32, data };
  };
  // RMS norm weights of one leave the normalised activations untouched.
  const norm = (name: string): GgufTensor => ({
    name,
    dimensions: [embeddingLength],
    type: GgmlType.F32,
    data: new Float32Array(embeddingLength).fill(1),
  });

  const tensors: GgufTensor[] = [matrix('token_embd.weight', embeddingLength, vocabularySize)];
  for (let block = 0; block < settings.blockCount; block++) {
    const prefix = `blk.${block}.`;
    tensors.push(
      norm(`${prefix}attn_norm.weight`),
      matrix(`${prefix}attn_q.weight`, embeddingLength, headCount * headDimension),
      matrix(`${prefix}attn_k.weight`, embeddingLength, headCountKv * headDimension),
      matrix(`${prefix}attn_v.weight`, embeddingLength, headCountKv * headDimension),
      matrix(`${prefix}attn_output.weight`, headCount * headDimension, embeddingLength),
      norm(`${prefix}ffn_norm.weight`),
      matrix(`${prefix}ffn_gate.weight`, embeddingLength, feedForwardLength),
      matrix(`${prefix}ffn_up.weight`, embeddingLength, feedForwardLength),
      matrix(`${prefix}ffn_down.weight`, feedForwardLength, embeddingLength),
    );
  }
  // Byte tokens outnumber the ordinary pieces, so random logits would often pick them (invalid
  // UTF-8 noise) and now and then end the turn by chance. Zero logits for byte and control tokens,
  // against a wide spread for the ordinary pieces, make replies printable ASCII that runs to
  // maxTokens. Tests needing an end of turn ban every other token: node-llama-cpp ignores biases on
  // end-of-generation tokens. Row t of this [embedding, vocabulary] matrix gives token t's logit.
  const output = matrix('output.weight', embeddingLength, vocabularySize, 4);
  vocabulary.types.forEach((type, token) => {
    if (type !== tokenType.normal) {
      output.data.fill(0, token * embeddingLength, (token + 1) * embeddingLength);
    }
  });
  tensors.push(norm('output_norm.weight'), output);

  const uint32 = (value: number): GgufMetadataValue => ({ type: 'uint32', value });
  const metadata: Record<string, GgufMetadataValue> = {
    'general.architecture': { type: 'string', value: 'llama' },
    'general.name': { type: 'string', value: settings.name },
    'general.alignment': uint32(32),
    'general.file_type': uint32(0), // ALL_F32, so tools report the right quantisation
    'llama.vocab_size': uint32(vocabularySize),
    'llama.context_length': uint32(settings.contextLength),
    'llama.embedding_length': uint32(embeddingLength),
    'llama.block_count': uint32(settings.blockCount),
    'llama.feed_forward_length': uint32(feedForwardLength),
    'llama.attention.head_count': uint32(headCount),
    'llama.attention.head_count_kv': uint32(headCountKv),
    'llama.rope.dimension_count': uint32(headDimension),
    'llama.rope.freq_base': { type: 'float32', value: 10000 },
    'llama.attention.layer_norm_rms_epsilon': { type: 'float32', value: 1e-5 },
    'tokenizer.ggml.model': { type: 'string', value: 'llama' },
    'tokenizer.ggml.tokens': { type: 'string[]', value: vocabulary.tokens },
    'tokenizer.ggml.scores': { type: 'float32[]', value: vocabulary.scores },
    'tokenizer.ggml.token_type': { type: 'int32[]', value: vocabulary.types },
    'tokenizer.ggml.bos_token_id': uint32(tinyLlamaTokenIds.beginOfSequence),
    'tokenizer.ggml.eos_token_id': uint32(tinyLlamaTokenIds.imEnd),
    'tokenizer.ggml.unknown_token_id': uint32(tinyLlamaTokenIds.unknown),
    'tokenizer.ggml.padding_token_id': uint32(tinyLlamaTokenIds.endOfText),
    'tokenizer.ggml.add_bos_token': { type: 'bool', value: true },
    'tokenizer.ggml.add_eos_token': { type: 'bool', value: false },
    // SPM's default would insert a space after every special token ("<|im_start|> user"), so the
    // prompt would no longer be what the ChatML template renders.
    'tokenizer.ggml.add_space_prefix': { type: 'bool', value: false },
    'tokenizer.chat_template': {
      type: 'string',
      value: options.chatTemplate ?? tinyLlamaChatTemplate,
    },
  };
  await writeGgufFile(filePath, { metadata, tensors });
}
