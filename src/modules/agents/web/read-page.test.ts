// extractPage: the article without its chrome, the visible-text fallback, text passthrough and the cap.
import { describe, expect, it } from 'vitest';
import {
  articleByline,
  articlePage,
  articleParagraphs,
  articleTitle,
  chromeMarkers,
} from '../../../../test/support/web-pages.js';
import { normaliseWhitespace } from '../../../text/plain-text.js';
import { extractPage } from './extract-page.js';

const url = 'https://ocean.example/tides';

describe('extractPage', () => {
  it('returns the article, paragraph by paragraph, without nav, scripts, styles, ads or footer', () => {
    const page = extractPage(articlePage, url);
    expect(page.method).toBe('readability');
    expect(page.title).toBe(articleTitle);
    expect(page.byline).toBe(`By ${articleByline}`);
    expect(page.excerpt).toBe('Why the sea rises and falls twice a day.');
    expect(page.text).toBe(articleParagraphs.join('\n\n'));
    for (const marker of chromeMarkers) expect(page.text).not.toContain(marker);
    expect(page.length).toBe(page.text.length);
    expect(page.truncated).toBe(false);
  });

  it("falls back to the body's visible text when there is no article", () => {
    const html = `<html><head><title>Status</title><script>var SCRIPT_MARKER;</script></head><body>
      <nav>NAV_MARKER <a href="/">Home</a></nav>
      <div class="ad">AD_MARKER</div>
      <div hidden>HIDDEN_MARKER</div><div style="display: none">HIDDEN_MARKER</div>
      <div><span>All   systems</span> <b>operational</b>.</div><div>Next check in 5 minutes.</div>
      <footer>FOOTER_MARKER</footer></body></html>`;
    const page = extractPage(html, url);
    expect(page.method).toBe('visible_text');
    expect(page).toMatchObject({
      title: 'Status',
      text: 'All systems operational.\n\nNext check in 5 minutes.',
      excerpt: 'All systems operational. Next check in 5 minutes.',
    });
    expect(page.byline).toBeUndefined();
  });

  it('breaks lines at <br>, marks list items, separates paragraphs and table cells', () => {
    // Readability turns divs holding only text into paragraphs (one, two).
    const html = `<html><body><div class="x"><div>one</div><div>two</div></div>
      <p>three<br>four</p><p>five</p><table><tr><td>a</td><td>b</td></tr><tr><td>c</td></tr></table>
      <ul><li>first
        item</li><li>second</li></ul></body></html>`;
    expect(extractPage(html, url).text).toBe(
      'one\n\ntwo\n\nthree\nfour\n\nfive\n\na | b\nc\n\n- first item\n- second',
    );
  });

  it('reads documents without <html>, <head> or <body> as browsers do', () => {
    expect(extractPage('<!doctype html><title>T</title><p>Only text.</p>', url)).toMatchObject({
      title: 'T',
      text: 'Only text.',
    });
    expect(
      extractPage('<html><head><title>T</title></head><p>After head.</p></html>', url),
    ).toMatchObject({ title: 'T', text: 'After head.' });
    expect(extractPage('just words', url).text).toBe('just words');
  });

  it('uses the first heading, else the URL, as the title of an untitled page', () => {
    expect(extractPage('<body><h1>Heading</h1><p>Text.</p></body>', url).title).toBe('Heading');
    expect(extractPage('<body><p>Text.</p></body>', url).title).toBe(url);
  });

  it('passes plain text and markdown through, tidying only line ends and blank runs', () => {
    const markdown = extractPage(
      '# Release notes\r\n\r\n\r\n\r\n- fixed   a bug  \n  - nested\n',
      url,
      {
        contentType: 'text/markdown',
      },
    );
    expect(markdown).toMatchObject({
      method: 'plain_text',
      title: 'Release notes',
      text: '# Release notes\n\n- fixed   a bug\n  - nested',
    });
    const plain = extractPage('\n\nJust text.\n', url, { contentType: 'text/plain' });
    expect(plain).toMatchObject({ title: '', text: 'Just text.', excerpt: 'Just text.' });
    const json = extractPage('{"a": 1}', url, { contentType: 'application/json' });
    expect(json.text).toBe('{"a": 1}');
  });

  it('caps the text at maxChars, on a word boundary, and says so', () => {
    const page = extractPage(articlePage, url, { maxChars: 100 });
    expect(page.truncated).toBe(true);
    expect(page.text.length).toBeLessThanOrEqual(100);
    expect(page.text.length).toBeGreaterThan(90);
    expect(articleParagraphs[0]?.startsWith(page.text)).toBe(true);
    expect(page.text.endsWith(' ')).toBe(false);
    expect(page.length).toBe(page.text.length);
  });

  it('never cuts a surrogate pair in half', () => {
    const page = extractPage('😀'.repeat(10), url, { contentType: 'text/plain', maxChars: 5 });
    expect(page.text).toBe('😀😀');
  });

  it('handles an empty document', () => {
    expect(extractPage('', url)).toMatchObject({ text: '', length: 0, title: url });
  });
});

describe('normaliseWhitespace', () => {
  it('collapses spaces, trims lines, keeps at most one blank line and drops zero-width characters', () => {
    expect(normaliseWhitespace('  a\u00a0\u00a0b\t c \n\n\n\n d\u200b \r\n e ')).toBe(
      'a b c\n\nd\ne',
    );
  });
});
