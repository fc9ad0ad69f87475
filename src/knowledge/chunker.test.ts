// Unit tests of text extraction and chunking on tricky input: abbreviations, lists, code, CJK,
// empty sections, HTML chrome, over-long sentences, overlap and size bounds.
import { describe, expect, it } from 'vitest';
import {
  chunkBlocks,
  chunkDocument,
  packPieces,
  splitLongText,
  splitSentences,
  type ChunkingOptions,
} from './chunker.js';
import { extractText, markdownInlineText } from './extract-text.js';

const texts = (pieces: { text: string }[]) => pieces.map((piece) => piece.text);

describe('splitSentences', () => {
  it('ends sentences at . ! ? … before a capital, a digit or a quote', () => {
    expect(
      texts(splitSentences('It works! Really? Yes. "Quoted." 42 is the answer… Done')),
    ).toEqual(['It works!', 'Really?', 'Yes.', '"Quoted."', '42 is the answer…', 'Done']);
  });

  it('does not end sentences at abbreviations, initials or dotted initialisms', () => {
    expect(
      texts(
        splitSentences(
          'Use a tool, e.g. Python, i.e. Something dynamic. Ask Dr. Smith and Prof. Jones. J. R. R. Tolkien lived in the U.K. Then he died. See Fig. 3 and No. 5 vs. Apple.',
        ),
      ),
    ).toEqual([
      'Use a tool, e.g. Python, i.e. Something dynamic.',
      'Ask Dr. Smith and Prof. Jones.',
      'J. R. R. Tolkien lived in the U.K. Then he died.',
      'See Fig. 3 and No. 5 vs. Apple.',
    ]);
  });

  it('does not end a sentence before a lower-case word, inside numbers or in addresses', () => {
    expect(
      texts(splitSentences('Pi is 3.14 and e is 2.71 on example.com today... and more. End.')),
    ).toEqual(['Pi is 3.14 and e is 2.71 on example.com today... and more.', 'End.']);
  });

  it('keeps the number of a numbered list item with its text', () => {
    expect(texts(splitSentences('1. Download the package. 2. Install it.'))).toEqual([
      '1. Download the package.',
      '2. Install it.',
    ]);
  });

  it('splits CJK text at 。！？ without spaces, keeping closing brackets', () => {
    const sentences = splitSentences('東京は晴れです。大阪は「雨」です！本当？ Yes, really.');
    expect(texts(sentences)).toEqual([
      '東京は晴れです。',
      '大阪は「雨」です！',
      '本当？',
      'Yes, really.',
    ]);
    expect(sentences.map((sentence) => sentence.separator)).toEqual(['', '', '', ' ']);
  });

  it('collapses whitespace and returns nothing for blank text', () => {
    expect(texts(splitSentences('  One.\n\n  Two.  '))).toEqual(['One.', 'Two.']);
    expect(splitSentences('   ')).toEqual([]);
  });
});

describe('splitLongText', () => {
  it('cuts between words, never inside one', () => {
    const sentence = Array.from({ length: 60 }, (_, index) => `word${index}`).join(' ');
    const pieces = splitLongText(sentence, 50);
    expect(pieces.length).toBeGreaterThan(1);
    for (const piece of pieces) {
      expect(piece.text.length).toBeLessThanOrEqual(50);
      expect(piece.text).toMatch(/^word\d+( word\d+)*$/);
    }
    expect(pieces.map((piece) => piece.text).join(' ')).toBe(sentence);
  });

  it('cuts CJK text without spaces at word boundaries', () => {
    const text = '今日は東京の天気が晴れです'.repeat(10);
    const pieces = splitLongText(text, 20);
    expect(pieces.map((piece) => piece.text).join('')).toBe(text);
    for (const piece of pieces) {
      expect(piece.text.length).toBeLessThanOrEqual(20);
      expect(piece.separator).toBe('');
    }
    // Word segmentation keeps 東京 and 天気 whole.
    expect(pieces.some((piece) => piece.text.endsWith('東') || piece.text.startsWith('京'))).toBe(
      false,
    );
  });

  it('cuts a single word longer than the limit between code points', () => {
    const pieces = splitLongText(`short ${'x'.repeat(25)} end`, 10);
    expect(pieces.every((piece) => piece.text.length <= 10)).toBe(true);
    const rejoined = pieces.map(
      (piece, index) => (index === 0 ? '' : piece.separator) + piece.text,
    );
    expect(rejoined.join('')).toBe(`short ${'x'.repeat(25)} end`);
    // Surrogate pairs are never split.
    const emoji = splitLongText('😀'.repeat(12), 5);
    expect(
      emoji.every((piece) => piece.text.length <= 5 && !/[\ud800-\udbff]$/.test(piece.text)),
    ).toBe(true);
  });
});

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

describe('extractText', () => {
  it('keeps Markdown heading paths, strips inline markup, and skips front matter', () => {
    const extracted = extractText(
      [
        '---',
        'title: ignored',
        '---',
        '# Install',
        'Intro with **bold**, _emphasis_, `a*b*c` and [a link](https://example.com).',
        '## Linux',
        'Use apt.',
        '',
        'Setext heading',
        '--------------',
        'Under setext.',
        '### Deep ###',
        '> Quoted text.',
      ].join('\n'),
      'text/markdown',
    );
    expect(extracted.title).toBe('Install');
    expect(extracted.blocks.map((block) => [block.headings.join(' > '), block.text])).toEqual([
      ['Install', 'Intro with bold, emphasis, a*b*c and a link.'],
      ['Install > Linux', 'Use apt.'],
      ['Install > Setext heading', 'Under setext.'],
      ['Install > Setext heading > Deep', 'Quoted text.'],
    ]);
    expect(extracted.text).not.toContain('ignored');
  });

  it('keeps snake_case and 2*3*4 as written', () => {
    expect(markdownInlineText('call my_function_name with 2*3*4')).toBe(
      'call my_function_name with 2*3*4',
    );
  });

  it('keeps fenced and indented code verbatim, even with headings and blank lines inside', () => {
    const extracted = extractText(
      [
        'Text first.',
        '',
        '```python',
        '# not a heading',
        '',
        'x = 1.  # Done. Next',
        '```',
        '',
        '    indented = True',
        '',
        'After.',
      ].join('\n'),
      'text/markdown',
    );
    expect(extracted.blocks.map((block) => [block.kind, block.text])).toEqual([
      ['prose', 'Text first.'],
      ['code', '# not a heading\n\nx = 1.  # Done. Next'],
      ['code', 'indented = True'],
      ['prose', 'After.'],
    ]);
    expect(extracted.blocks.every((block) => block.headings.length === 0)).toBe(true);
  });

  it('turns Markdown lists and tables into one line per item or row', () => {
    const extracted = extractText(
      ['* first item', '  continued', '2. second', '', '| a | b |', '|---|:-:|', '| 1 | 2 |'].join(
        '\n',
      ),
      'text/markdown',
    );
    expect(extracted.blocks.map((block) => [block.kind, block.text])).toEqual([
      ['item', '- first item continued'],
      ['item', '2. second'],
      ['item', 'a | b'],
      ['item', '1 | 2'],
    ]);
  });

  it('drops HTML scripts, styles, navigation, forms and page chrome, and reads headings', () => {
    const extracted = extractText(
      `<!doctype html><html><head><title>The page</title><style>p{}</style></head><body>
        <header>Site name</header><nav><a href="/">Home</a></nav>
        <div><h1>Guide</h1><p>First <b>para</b>.<script>alert("x")</script></p>
        <h2>Steps</h2><ol start="3"><li>Open it.</li><li>Close it.</li></ol>
        <pre>  keep   spacing\n  here</pre>
        <form><input value="q"><button>Go</button></form>
        <p hidden>hidden text</p><div aria-hidden="true">also hidden</div></div>
        <footer>© Company</footer></body></html>`,
      'text/html',
    );
    expect(extracted.title).toBe('The page');
    expect(
      extracted.blocks.map((block) => [block.headings.join(' > '), block.kind, block.text]),
    ).toEqual([
      ['Guide', 'prose', 'First para.'],
      ['Guide > Steps', 'item', '3. Open it.'],
      ['Guide > Steps', 'item', '4. Close it.'],
      ['Guide > Steps', 'code', '  keep   spacing\n  here'],
    ]);
    for (const hidden of [
      'Site name',
      'Home',
      'alert',
      'Go',
      'hidden text',
      'also hidden',
      'Company',
    ]) {
      expect(extracted.text).not.toContain(hidden);
    }
  });

  it('reads HTML fragments, decoding entities, with the first heading as title', () => {
    const extracted = extractText(
      '<h3>Q &amp; A</h3><p>Tom&#39;s <i>answer</i>&nbsp;here.</p>',
      'text/html',
    );
    expect(extracted.title).toBe('Q & A');
    expect(extracted.blocks).toEqual([
      { headings: ['Q & A'], section: 1, kind: 'prose', text: "Tom's answer here." },
    ]);
  });

  it('prefers <main> over the rest of the page', () => {
    const extracted = extractText(
      '<body><div>Sidebar junk</div><main><p>The content.</p></main></body>',
      'text/html',
    );
    expect(extracted.text).toBe('The content.');
  });

  it('reads plain text by paragraphs, joining wrapped lines and keeping list lines apart', () => {
    const extracted = extractText(
      'A paragraph that was\nwrapped by an editor.\r\n\r\n- one\n- two\n\n\nLast.',
      'text/plain',
    );
    expect(extracted.title).toBe('A paragraph that was');
    expect(extracted.blocks.map((block) => [block.kind, block.text])).toEqual([
      ['prose', 'A paragraph that was wrapped by an editor.'],
      ['item', '- one'],
      ['item', '- two'],
      ['prose', 'Last.'],
    ]);
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
      const previous = splitSentences(chunked.chunks[index - 1]!.text);
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
    const started = Date.now();
    chunkDocument('**a [b '.repeat(30_000), 'text/markdown', options);
    chunkDocument('東京は日本の首都です'.repeat(12_000), 'text/plain', options);
    expect(Date.now() - started).toBeLessThan(4000);
  });

  it('refuses an overlap as large as the chunk', () => {
    expect(() => chunkBlocks([], { chunkSize: 100, chunkOverlap: 100 })).toThrow(RangeError);
  });
});
