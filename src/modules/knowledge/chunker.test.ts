// Unit tests of chunking on tricky input: lists, code, CJK, empty sections, over-long sentences,
// overlap and size bounds.
import { describe, expect, it } from 'vitest';
import { growthExponent, linearExponent } from '../../../test/support/growth.js';
import { sentencePieces } from '../../text/sentences.js';
import {
  chunkBlocks,
  chunkDocument,
  packPieces,
  TooManyChunksError,
  type ChunkingOptions,
} from './chunker.js';

describe('packPieces', () => {
  const piece = (text: string, separator = ' ') => ({ text, separator });
  const options: ChunkingOptions = { chunkSize: 30, chunkOverlap: 12 };

  it('packs whole pieces up to the size and overlaps whole pieces up to the overlap', () => {
    const chunks = packPieces(
      [piece('Alpha one.', ''), piece('Beta two.'), piece('Gamma three.'), piece('Delta four.')],
      options,
    );
    expect(chunks).toEqual([
      'Alpha one. Beta two.',
      'Beta two. Gamma three.',
      'Gamma three. Delta four.',
    ]);
    for (const chunk of chunks) expect(chunk.length).toBeLessThanOrEqual(30);
  });

  it('drops the overlap rather than exceed the size', () => {
    const chunks = packPieces([piece('Short one.', ''), piece('A sentence of exactly 29 char')], {
      chunkSize: 30,
      chunkOverlap: 12,
    });
    expect(chunks).toEqual(['Short one.', 'A sentence of exactly 29 char']);
  });

  it('overlaps nothing when the last piece is longer than the overlap', () => {
    expect(
      packPieces([piece('A rather long sentence.', ''), piece('Next sentence here.')], options),
    ).toEqual(['A rather long sentence.', 'Next sentence here.']);
  });
});

describe('chunkDocument', () => {
  const options: ChunkingOptions = { chunkSize: 120, chunkOverlap: 40 };

  it('gives each chunk its heading path and no chunk to an empty section', () => {
    const chunked = chunkDocument(
      '# Guide\n\n## Empty\n\n## Install\n\n### Linux\n\nRun apt.\n\n### Windows\n\nRun the installer.',
      'text/markdown',
      options,
    );
    expect(chunked.chunks).toEqual([
      { position: 0, heading: 'Guide > Install > Linux', text: 'Run apt.' },
      { position: 1, heading: 'Guide > Install > Windows', text: 'Run the installer.' },
    ]);
  });

  it('never exceeds the chunk size, keeps every word, and overlaps whole sentences', () => {
    const sentences = Array.from(
      { length: 40 },
      (_, index) => `Sentence number ${index} talks about topic ${index % 7}.`,
    );
    const chunked = chunkDocument(sentences.join(' '), 'text/plain', options);
    expect(chunked.chunks.length).toBeGreaterThan(5);
    for (const chunk of chunked.chunks) {
      expect(chunk.text.length).toBeLessThanOrEqual(120);
      // Whole sentences only: every chunk starts with a sentence's start and ends with its end.
      expect(chunk.text).toMatch(/^Sentence number \d+ .*\.$/);
    }
    for (const sentence of sentences) {
      expect(chunked.chunks.some((chunk) => chunk.text.includes(sentence))).toBe(true);
    }
    // Each sentence (38–39 characters) fits in the 40-character overlap, so every chunk starts
    // with the last sentence of the one before; without overlap no sentence is repeated.
    for (let index = 1; index < chunked.chunks.length; index += 1) {
      const previous = sentencePieces(chunked.chunks[index - 1]!.text);
      expect(chunked.chunks[index]!.text.startsWith(previous[previous.length - 1]!.text)).toBe(
        true,
      );
    }
    const withoutOverlap = chunkDocument(sentences.join(' '), 'text/plain', {
      chunkSize: 120,
      chunkOverlap: 0,
    });
    expect(withoutOverlap.chunks.map((chunk) => chunk.text).join(' ')).toBe(sentences.join(' '));
  });

  it('keeps a code block whole in one chunk when it fits, whatever its punctuation', () => {
    const code = 'def f(x):\n    """Return x. Always."""\n    return x  # Done! Really?';
    const chunked = chunkDocument(
      `# Code\n\nSome words before the code.\n\n\`\`\`\n${code}\n\`\`\`\n\nAnd after.`,
      'text/markdown',
      { chunkSize: 90, chunkOverlap: 20 },
    );
    expect(chunked.chunks.filter((chunk) => chunk.text.includes(code))).toHaveLength(1);
  });

  it('cuts an over-long code block between lines', () => {
    const lines = Array.from({ length: 30 }, (_, index) => `line_${index} = ${index}`);
    const chunked = chunkDocument(`\`\`\`\n${lines.join('\n')}\n\`\`\``, 'text/markdown', {
      chunkSize: 100,
      chunkOverlap: 0,
    });
    expect(chunked.chunks.length).toBeGreaterThan(2);
    expect(chunked.chunks.map((chunk) => chunk.text).join('\n')).toBe(lines.join('\n'));
  });

  it('chunks long CJK text within the size, losing no character', () => {
    const text = '東京は日本の首都です。人口は多いです。'.repeat(20);
    const chunked = chunkDocument(text, 'text/plain', { chunkSize: 50, chunkOverlap: 0 });
    expect(chunked.chunks.every((chunk) => chunk.text.length <= 50)).toBe(true);
    expect(chunked.chunks.map((chunk) => chunk.text).join('')).toBe(text);
  });

  it('is deterministic', () => {
    const input = '# A\n\nOne. Two three. Four!\n\n## B\n\n- x\n- y\n\n```\ncode\n```';
    expect(chunkDocument(input, 'text/markdown', options)).toEqual(
      chunkDocument(input, 'text/markdown', options),
    );
  });

  it('gives no chunk for a document without text', () => {
    expect(
      chunkDocument('<script>x()</script><style>p{}</style>', 'text/html', options).chunks,
    ).toEqual([]);
    expect(chunkBlocks([], options)).toEqual([]);
  });

  it('takes time linear in the size of pathological input', () => {
    // Unclosed marks made every one of them scan to the end of the text; ICU segmented long CJK
    // runs in far worse than linear time. Both took over ten seconds here before.
    const marks = (repeats: number) =>
      chunkDocument('**a [b '.repeat(repeats), 'text/markdown', options);
    const japanese = (repeats: number) =>
      chunkDocument('東京は日本の首都です'.repeat(repeats), 'text/plain', options);
    expect(growthExponent(marks, 4_000)).toBeLessThan(linearExponent);
    expect(growthExponent(japanese, 1_000)).toBeLessThan(linearExponent);
  });

  it('refuses a document past maxChunks as soon as its sections show it', () => {
    const sections = (count: number) => '# h\nx\n'.repeat(count);
    expect(
      chunkDocument(sections(100), 'text/markdown', { ...options, maxChunks: 100 }).chunks,
    ).toHaveLength(100);
    expect(() =>
      chunkDocument(sections(101), 'text/markdown', { ...options, maxChunks: 100 }),
    ).toThrow(TooManyChunksError);
    // One long section makes many chunks without many sections: counted after packing.
    expect(() =>
      chunkDocument('Word. '.repeat(5000), 'text/plain', { ...options, maxChunks: 3 }),
    ).toThrow(TooManyChunksError);
    expect(() =>
      chunkDocument('<h2>h</h2><p>x</p>'.repeat(101), 'text/html', { ...options, maxChunks: 100 }),
    ).toThrow(TooManyChunksError);
  });

  it('refuses an overlap as large as the chunk', () => {
    expect(() => chunkBlocks([], { chunkSize: 100, chunkOverlap: 100 })).toThrow(RangeError);
  });
});
