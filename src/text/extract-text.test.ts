// extractText: plain text, Markdown and HTML documents as blocks under their heading paths.
import { describe, expect, it } from 'vitest';
import { extractText } from './extract-text.js';

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

  it('keeps plain-text item markers, ends blocks at label lines, and cuts a long first-line title at a word', () => {
    const extracted = extractText(
      `Shopping list\nFor the weekend:\n• bread\n(b) milk\n\n${'word '.repeat(60)}`,
      'text/plain',
    );
    expect(extracted.blocks.map((block) => [block.kind, block.text])).toEqual([
      ['prose', 'Shopping list'],
      ['prose', 'For the weekend:'],
      ['item', '• bread'],
      ['item', '(b) milk'],
      ['prose', 'word '.repeat(60).trim()],
    ]);
    expect(extracted.title).toBe('Shopping list');
    expect(extractText('word '.repeat(60), 'text/plain').title).toBe('word '.repeat(40).trim());
  });
});
