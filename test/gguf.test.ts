// The generated tiny GGUF, proven on node-llama-cpp: parse, load, tokenize, chat, embed, abort.
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  ChatMLChatWrapper,
  getLlama,
  LlamaChatSession,
  LlamaCompletion,
  LlamaLogLevel,
  LlamaVocabularyType,
  readGgufFileInfo,
  resolveChatWrapper,
  TokenBias,
  type GgufFileInfo,
  type Llama,
  type LlamaModel,
  type Token,
} from 'node-llama-cpp';
import { GgmlType, writeGgufFile } from './support/gguf/gguf-writer.js';
import {
  tinyLlamaChatTemplate,
  tinyLlamaDefaults,
  tinyLlamaSpecialTokens,
  tinyLlamaTokenIds,
  writeTinyLlamaGguf,
} from './support/gguf/tiny-llama.js';

const directory = await mkdtemp(path.join(tmpdir(), 'platform-gguf-'));
const modelPath = path.join(directory, 'tiny.gguf');
const { embeddingLength, contextLength, headCount, headCountKv, feedForwardLength } =
  tinyLlamaDefaults;
const headDimension = embeddingLength / headCount;

beforeAll(() => writeTinyLlamaGguf(modelPath));
afterAll(() => rm(directory, { recursive: true, force: true }));

describe('the GGUF writer', () => {
  it("writes a v3 file that node-llama-cpp's own GGUF reader parses back", async () => {
    const info = await readGgufFileInfo(modelPath, { logWarnings: false });
    expect(info.version).toBe(3);
    expect(info.metadata.general).toMatchObject({ architecture: 'llama', alignment: 32 });
    expect(info.architectureMetadata).toMatchObject({
      context_length: contextLength,
      embedding_length: embeddingLength,
      block_count: tinyLlamaDefaults.blockCount,
      feed_forward_length: feedForwardLength,
      attention: { head_count: headCount, head_count_kv: headCountKv },
      rope: { dimension_count: headDimension },
    });
    const rmsEpsilon = info.architectureMetadata.attention?.layer_norm_rms_epsilon;
    expect(rmsEpsilon).toBeCloseTo(1e-5, 10);

    const tokens = info.metadata.tokenizer.ggml.tokens;
    expect(tokens.slice(0, 4)).toEqual(['<unk>', '<s>', '</s>', '<0x00>']);
    expect(tokens[tinyLlamaTokenIds.firstByte + 0xff]).toBe('<0xFF>');
    expect(tokens[tinyLlamaTokenIds.imEnd]).toBe(tinyLlamaSpecialTokens.imEnd);
    expect(info.metadata.tokenizer.ggml.token_type[tinyLlamaTokenIds.imStart]).toBe(3);
    expect(info.metadata.tokenizer.ggml.token_type[tinyLlamaTokenIds.firstByte]).toBe(6);
    expect(info.metadata.tokenizer.chat_template).toBe(tinyLlamaChatTemplate);

    const tensors = new Map(info.tensorInfo?.map((tensor) => [tensor.name, tensor]));
    expect(tensors.size).toBe(3 + 9 * tinyLlamaDefaults.blockCount);
    expect(tensors.get('token_embd.weight')?.dimensions).toEqual([embeddingLength, tokens.length]);
    expect(tensors.get('blk.1.attn_k.weight')?.dimensions).toEqual([
      embeddingLength,
      headCountKv * headDimension,
    ]);
    expect(tensors.get('blk.1.ffn_down.weight')?.dimensions).toEqual([
      feedForwardLength,
      embeddingLength,
    ]);
    expect(tensors.get('output_norm.weight')?.dimensions).toEqual([embeddingLength]);

    // Every tensor aligned, and the last one ending exactly at the end of the file.
    const all = [...tensors.values()];
    for (const tensor of all) expect(Number(tensor.fileOffset) % 32).toBe(0);
    const last = all.at(-1)!;
    const lastBytes = last.dimensions.reduce<number>((product, size) => product * Number(size), 4);
    expect((await stat(modelPath)).size).toBe(Number(last.fileOffset) + lastBytes);
  });

  it('is byte-for-byte reproducible for a seed, and differs across seeds', async () => {
    const again = path.join(directory, 'again.gguf');
    const otherSeed = path.join(directory, 'other-seed.gguf');
    await writeTinyLlamaGguf(again);
    await writeTinyLlamaGguf(otherSeed, { seed: 2 });
    const [original, repeated, other] = await Promise.all(
      [modelPath, again, otherSeed].map((file) => readFile(file)),
    );
    expect(repeated!.equals(original!)).toBe(true);
    expect(other!.length).toBe(original!.length);
    expect(other!.equals(original!)).toBe(false);
  });

  it('rejects tensor data that does not match its dimensions', async () => {
    const tensor = {
      name: 'bad',
      dimensions: [2, 2],
      type: GgmlType.F32,
      data: new Float32Array(3),
    };
    await expect(
      writeGgufFile(path.join(directory, 'bad.gguf'), { metadata: {}, tensors: [tensor] }),
    ).rejects.toThrow(/bad: dimensions \[2, 2\] need 16 bytes, data has 12/);
  });
});

describe('the tiny llama model on node-llama-cpp', () => {
  let llama: Llama;
  let model: LlamaModel;
  const cleanups: Array<() => Promise<void> | void> = [];

  beforeAll(async () => {
    // build: 'never' because building llama.cpp needs the network; one thread because the CI
    // machine has two shared cores and node-llama-cpp would otherwise ask for four.
    llama = await getLlama({
      gpu: false,
      build: 'never',
      logLevel: LlamaLogLevel.error,
      maxThreads: 1,
    });
    model = await llama.loadModel({ modelPath });
  });
  afterEach(async () => {
    while (cleanups.length > 0) await cleanups.pop()!();
  });
  afterAll(async () => {
    await model?.dispose();
    await llama?.dispose();
  });

  async function openChatSession(systemPrompt = 'Be brief.'): Promise<LlamaChatSession> {
    const context = await model.createContext({ contextSize: contextLength, threads: 1 });
    cleanups.push(() => context.dispose());
    return new LlamaChatSession({ contextSequence: context.getSequence(), systemPrompt });
  }

  function chatMl(role: string, content: string): string {
    return `<|im_start|>${role}\n${content}<|im_end|>\n`;
  }

  it('loads and reports the metadata it was written with', () => {
    expect(model.trainContextSize).toBe(contextLength);
    expect(model.embeddingVectorSize).toBe(embeddingLength);
    expect(model.vocabularyType).toBe(LlamaVocabularyType.spm);
    expect(model.fileInfo.metadata.general.architecture).toBe('llama');
    expect(model.tokens.bos).toBe(tinyLlamaTokenIds.beginOfSequence);
    expect(model.tokens.eos).toBe(tinyLlamaTokenIds.imEnd);
    expect(model.tokens.eosString).toBe(tinyLlamaSpecialTokens.imEnd);
  });

  it.each(['Hello world', ' hello world ', 'Héllo wörld — 日本', 'tab\tnew\nline', '🙂 ok'])(
    'round-trips %j through tokenize and detokenize',
    (text) => {
      expect(model.detokenize(model.tokenize(text))).toBe(text);
    },
  );

  it('uses whole-word pieces where it has them and byte tokens for everything else', () => {
    expect(model.tokenize(' hello world')).toHaveLength(2);
    const japanese = model.tokenize('日本');
    expect(japanese).toHaveLength(Buffer.byteLength('日本'));
    const firstByte = tinyLlamaTokenIds.firstByte;
    expect(japanese.every((token) => token >= firstByte && token <= firstByte + 0xff)).toBe(true);
  });

  it('recognises the ChatML markers as special tokens, and only when asked to', () => {
    const { imStart, imEnd } = tinyLlamaSpecialTokens;
    expect(model.tokenize(`${imStart}user${imEnd}`, true)).toEqual([
      tinyLlamaTokenIds.imStart,
      ...model.tokenize('user'),
      tinyLlamaTokenIds.imEnd,
    ]);
    expect(model.isSpecialToken(tinyLlamaTokenIds.imStart as Token)).toBe(true);
    expect(model.isEogToken(tinyLlamaTokenIds.imEnd as Token)).toBe(true);

    const asPlainText = model.tokenize(imStart);
    expect(asPlainText.length).toBeGreaterThan(1);
    expect(asPlainText).not.toContain(tinyLlamaTokenIds.imStart);
    expect(model.detokenize([tinyLlamaTokenIds.imEnd as Token], true)).toBe(imEnd);
    expect(model.detokenize([tinyLlamaTokenIds.imEnd as Token], false)).toBe('');
  });

  it("resolves the ChatML chat wrapper from the file's chat template", () => {
    expect(resolveChatWrapper(model)).toBeInstanceOf(ChatMLChatWrapper);

    // The same model without the template resolves to something else, so the template decided.
    const { tokenizer } = model.fileInfo.metadata;
    const fileInfo: GgufFileInfo = {
      ...model.fileInfo,
      metadata: { ...model.fileInfo.metadata, tokenizer: { ...tokenizer, chat_template: '' } },
    };
    const withoutTemplate = resolveChatWrapper({
      fileInfo,
      tokenizer: model.tokenizer,
      bosString: model.tokens.bosString,
      filename: model.filename,
    });
    expect(withoutTemplate).not.toBeInstanceOf(ChatMLChatWrapper);
  });

  it('chats in ChatML and stops at maxTokens', async () => {
    const session = await openChatSession();
    expect(session.chatWrapper).toBeInstanceOf(ChatMLChatWrapper);
    const generated: Token[] = [];
    const result = await session.promptWithMeta('Hello there', {
      maxTokens: 8,
      onToken: (tokens) => generated.push(...tokens),
    });

    expect(result.stopReason).toBe('maxTokens');
    expect(generated).toHaveLength(8);
    expect(result.responseText).toBe(model.detokenize(generated));
    // Byte and control tokens have zero output weights, so random replies are still plain ASCII.
    expect(result.responseText).toMatch(/^[\x20-\x7e]+$/);

    const prompt =
      '<s>' +
      chatMl('system', 'Be brief.') +
      chatMl('user', 'Hello there') +
      '<|im_start|>assistant\n';
    const evaluated = model.detokenize(session.sequence.contextTokens, true);
    expect(evaluated.startsWith(prompt)).toBe(true);
    // The final sampled token is returned but not yet fed back, so the context holds the rest.
    expect(result.responseText.startsWith(evaluated.slice(prompt.length))).toBe(true);
  });

  it('ends the reply at an end-of-generation token without emitting it', async () => {
    const session = await openChatSession();
    // Biases on end-of-generation tokens are ignored, so banning every token leaves only those.
    const everyToken = Array.from({ length: model.fileInfo.metadata.tokenizer.ggml.tokens.length });
    const onlyEndOfGeneration = TokenBias.for(model).set(
      everyToken.map((_, token) => token as Token),
      'never',
    );
    const result = await session.promptWithMeta('Hi', {
      maxTokens: 8,
      tokenBias: onlyEndOfGeneration,
    });
    expect(result.stopReason).toBe('eogToken');
    expect(result.responseText).toBe('');
  });

  it('completes raw text through the lower-level completion API', async () => {
    const context = await model.createContext({ contextSize: contextLength, threads: 1 });
    cleanups.push(() => context.dispose());
    const completion = new LlamaCompletion({ contextSequence: context.getSequence() });
    const result = await completion.generateCompletionWithMeta('the answer is', { maxTokens: 5 });
    expect(result.metadata.stopReason).toBe('maxTokens');
    expect(model.tokenize(result.response).length).toBeLessThanOrEqual(5);
    expect(result.response).not.toBe('');
  });

  it('embeds text as a vector of embeddingLength finite numbers, deterministically', async () => {
    const embeddingContext = await model.createEmbeddingContext({
      contextSize: contextLength,
      threads: 1,
    });
    cleanups.push(() => embeddingContext.dispose());
    const hello = await embeddingContext.getEmbeddingFor('hello world');
    const helloAgain = await embeddingContext.getEmbeddingFor('hello world');
    const other = await embeddingContext.getEmbeddingFor('what is the question');

    expect(hello.vector).toHaveLength(embeddingLength);
    expect(hello.vector.every((value) => Number.isFinite(value))).toBe(true);
    expect(hello.vector.some((value) => value !== 0)).toBe(true);
    expect(helloAgain.vector).toEqual(hello.vector);
    expect(hello.calculateCosineSimilarity(other)).toBeLessThan(0.999);
  });

  describe('cancellation', () => {
    it('stops within a token of the abort and keeps the partial reply', async () => {
      const session = await openChatSession();
      const controller = new AbortController();
      let generatedTokens = 0;
      const result = await session.promptWithMeta('Tell me a long story', {
        maxTokens: 400,
        signal: controller.signal,
        stopOnAbortSignal: true,
        onToken: (tokens) => {
          generatedTokens += tokens.length;
          if (generatedTokens >= 3) controller.abort();
        },
      });
      expect(result.stopReason).toBe('abort');
      expect(generatedTokens).toBeGreaterThanOrEqual(3);
      expect(generatedTokens).toBeLessThanOrEqual(4);
      expect(result.responseText).not.toBe('');
    });

    it('rejects with the abort reason when not asked to keep the partial reply', async () => {
      const session = await openChatSession();
      const controller = new AbortController();
      let generatedTokens = 0;
      const reply = session.prompt('Tell me a long story', {
        maxTokens: 400,
        signal: controller.signal,
        onToken: (tokens) => {
          generatedTokens += tokens.length;
          controller.abort(new Error('client went away'));
        },
      });
      await expect(reply).rejects.toThrow('client went away');
      expect(generatedTokens).toBeLessThanOrEqual(2);
    });

    it('generates nothing when the signal is already aborted', async () => {
      const session = await openChatSession();
      let generatedTokens = 0;
      const reply = session.prompt('Hello', {
        maxTokens: 400,
        signal: AbortSignal.abort(new Error('cancelled early')),
        onToken: (tokens) => void (generatedTokens += tokens.length),
      });
      await expect(reply).rejects.toThrow('cancelled early');
      expect(generatedTokens).toBe(0);
    });
  });
});
