// HTML to text: the walker's blocks, what counts as chrome or hidden, titles, fragments, and
// Readability's article against the visible-text fallback.
import { describe, expect, it } from 'vitest';
import {
  articleByline,
  articlePage,
  articleParagraphs,
  articleTitle,
  chromeMarkers,
} from '../../test/support/web-pages.js';
import { htmlFragmentText, htmlToText, readableHtml } from './html-text.js';

describe('htmlToText', () => {
  it('gives headings as the path, numbered and bulleted items, table rows and verbatim <pre>', () => {
    const extracted = htmlToText(`<body><h1>Guide</h1><p>First<br>line, <b>bold</b>
      <img alt="a chart" src="c.png">.</p><h2>Steps</h2><ol start="3"><li>Open.</li><li>Close.
      <ul><li>nested</li></ul></li></ol><table><tr><th>a</th><th>b</th></tr><tr><td>1</td><td></td></tr></table>
      <pre>  keep   spacing\n  here</pre></body>`);
    expect(
      extracted.blocks.map((block) => [block.headings.join(' > '), block.kind, block.text]),
    ).toEqual([
      ['Guide', 'prose', 'First\nline, bold a chart .'],
      ['Guide > Steps', 'item', '3. Open.'],
      ['Guide > Steps', 'item', '4. Close.'],
      ['Guide > Steps', 'item', '- nested'],
      ['Guide > Steps', 'item', 'a | b'],
      ['Guide > Steps', 'item', '1'],
      ['Guide > Steps', 'code', '  keep   spacing\n  here'],
    ]);
    expect(extracted.title).toBe('Guide');
    expect(extracted.text).toContain('3. Open.\n4. Close.\n- nested\n\na | b\n1\n\n  keep');
  });

  it('leaves out scripts, hidden elements, forms, navigation, asides, ads and page chrome', () => {
    const extracted = htmlToText(`<html><head><title>T</title><style>p{}</style></head><body>
      <header>SITE_HEADER</header><nav>NAV</nav><div role="navigation">ROLE_NAV</div>
      <div class="ad-slot">AD</div><div id="cookie-banner">COOKIE</div>
      <div><p>Kept text.<script>SCRIPT</script></p><p hidden>HIDDEN</p><p aria-hidden="true">ARIA</p>
      <p style="color: red; display: none">STYLE_HIDDEN</p><form><input value="q"><label>FORM</label></form>
      <aside>ASIDE</aside><button>BUTTON</button></div><footer>SITE_FOOTER</footer></body></html>`);
    expect(extracted.title).toBe('T');
    expect(extracted.text).toBe('Kept text.');
  });

  it("keeps an article's own header and footer", () => {
    const extracted = htmlToText(
      '<body><article><header><p>By Ann</p></header><p>Body.</p><footer><p>Filed under tides</p></footer></article></body>',
    );
    expect(extracted.text).toBe('By Ann\n\nBody.\n\nFiled under tides');
  });

  it('prefers <main>, then a single <article>, over the rest of the page', () => {
    expect(htmlToText('<div>Sidebar junk</div><main><p>The content.</p></main>').text).toBe(
      'The content.',
    );
    expect(htmlToText('<div>Junk</div><article><p>The story.</p></article>').text).toBe(
      'The story.',
    );
    expect(
      htmlToText('<div>Intro</div><article><p>One.</p></article><article><p>Two.</p></article>')
        .text,
    ).toBe('Intro\n\nOne.\n\nTwo.');
  });

  it('decodes entities, reads fragments and documents without <html>, and is empty without text', () => {
    expect(
      htmlToText('<h3>Q &amp; A</h3><p>Tom&#39;s&nbsp;answer &mdash; here.</p>'),
    ).toMatchObject({ title: 'Q & A', text: "Q & A\n\nTom's answer — here." });
    expect(htmlToText('<!doctype html><title>T</title><p>Only text.</p>')).toMatchObject({
      title: 'T',
      text: 'Only text.',
    });
    expect(htmlToText('<script>x()</script>')).toEqual({ title: null, text: '', blocks: [] });
  });
});

describe('htmlFragmentText', () => {
  it('gives one line of text with tags dropped and entities decoded', () => {
    expect(
      htmlFragmentText(
        '<strong>Tides</strong> rise &amp; fall&#39;s <em>twice</em>\n a day &#x2014; <br>mostly',
      ),
    ).toBe("Tides rise & fall's twice a day — mostly");
    expect(htmlFragmentText('plain & simple <script>no()</script>')).toBe('plain & simple');
  });
});

describe('readableHtml', () => {
  it("returns Readability's article, paragraph by paragraph, with its title, byline and excerpt", () => {
    const page = readableHtml(articlePage);
    expect(page).toMatchObject({
      method: 'readability',
      title: articleTitle,
      byline: `By ${articleByline}`,
      excerpt: 'Why the sea rises and falls twice a day.',
      text: articleParagraphs.join('\n\n'),
    });
    for (const marker of chromeMarkers) expect(page.text).not.toContain(marker);
  });

  it('falls back to the visible text, with the meta description, when there is no article', () => {
    const page = readableHtml(`<html><head><title>Status</title>
      <meta name="description" content="Service status."></head><body>
      <nav>NAV</nav><div class="ad">AD</div><div><span>All   systems</span> <b>operational</b>.</div>
      <ul><li>API</li><li>Web</li></ul><footer>FOOTER</footer></body></html>`);
    expect(page).toMatchObject({
      method: 'visible_text',
      title: 'Status',
      text: 'All systems operational.\n\n- API\n- Web',
      excerpt: 'Service status.',
      byline: null,
    });
  });

  it("takes a short article when it lies within the page's visible text, with the first heading as title", () => {
    const page = readableHtml('<body><h1>Heading</h1><p>Text.</p></body>');
    expect(page).toMatchObject({
      method: 'readability',
      title: 'Heading',
      text: 'Heading\n\nText.',
    });
    expect(readableHtml('<body><p>Text.</p></body>').title).toBeNull();
  });
});
