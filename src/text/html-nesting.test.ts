// HTML nested beyond any page: the nesting bound (what the parser sees afterwards, what text
// stays), and the walks over the parsed tree, which must not recurse once per level.
import { createRequire } from 'node:module';
import fc from 'fast-check';
import type * as LinkedomModule from 'linkedom';
import { describe, expect, it } from 'vitest';
import { boundHtmlNesting, maxHtmlDepth } from './html-nesting.js';
import { htmlFragmentText, htmlToText, measureTree, readableHtml } from './html-text.js';

const { parseHTML } = createRequire(import.meta.url)('linkedom') as typeof LinkedomModule;

interface TestNode {
  nodeType: number;
  textContent: string | null;
  childNodes: ArrayLike<TestNode>;
}

/** The tree linkedom builds from `html`, measured, with its text nodes' text in order. */
function parsedTree(html: string) {
  const { document } = parseHTML(html) as unknown as {
    document: Parameters<typeof measureTree>[0] & TestNode;
  };
  const texts: string[] = [];
  const stack: TestNode[] = [document];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (node.nodeType === 3) texts.push(node.textContent ?? '');
    for (let index = node.childNodes.length - 1; index >= 0; index -= 1) {
      stack.push(node.childNodes[index]!);
    }
  }
  return { ...measureTree(document), text: texts.join('') };
}

describe('boundHtmlNesting', () => {
  it('returns a document nested within the bound as it is', () => {
    const html = `<html><body>${'<div>'.repeat(100)}text${'</div>'.repeat(100)}</body></html>`;
    expect(boundHtmlNesting(html)).toEqual({ html, flattened: 0 });
  });

  it('flattens a million nested <div> to the bound, keeping the text', () => {
    const bounded = boundHtmlNesting(`${'<div>'.repeat(1_000_000)}deep text`);
    expect(bounded.flattened).toBe(1_000_000 - maxHtmlDepth);
    const tree = parsedTree(bounded.html);
    expect(tree.depth).toBe(maxHtmlDepth);
    expect(tree.text).toBe('deep text');
  });

  it('bounds SVG contexts that self-closing tags leave open in the parser', () => {
    // Each <svg/> closes at once, but htmlparser2 keeps its context on a second stack.
    const bounded = boundHtmlNesting(`${'<svg/>'.repeat(5000)}<p>after</p>`);
    expect(bounded.flattened).toBe(5000 - maxHtmlDepth + 1);
    expect(parsedTree(bounded.html).text).toBe('after');
  });

  it('never drops the start of raw text: markup inside a deep <script> stays text', () => {
    const html = `${'<div>'.repeat(300)}<script>${'<div>'.repeat(1000)}</script><p>after</p>`;
    const bounded = boundHtmlNesting(html);
    expect(bounded.html).toContain(`<script>${'<div>'.repeat(1000)}</script>`);
    expect(parsedTree(bounded.html).depth).toBeLessThanOrEqual(maxHtmlDepth + 1);
  });

  it('keeps any tag soup within the bound and every character of its text (property)', () => {
    const pieces = [
      '<div>',
      '</div>',
      '<p>',
      '</p>',
      '<li>',
      '<ul>',
      '<table>',
      '<tr>',
      '<td>',
      '<svg>',
      '</svg>',
      '<svg/>',
      '<g/>',
      '<math>',
      '<desc>',
      '</desc>',
      '<title>',
      '</title>',
      '<title/>',
      '<script>',
      '</script>',
      '<br>',
      '</br>',
      '<b class="x>">',
      '<!--',
      '-->',
      '<',
      '</',
      '>',
      '/',
      'text',
      '&amp;',
      ' ',
    ];
    const maxDepth = 4;
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...pieces), { maxLength: 60 }), (parts) => {
        const html = parts.join('');
        const bounded = boundHtmlNesting(html, maxDepth);
        const before = parsedTree(html);
        const after = parsedTree(bounded.html);
        // One raw-text element (script, title) may open past the bound: it holds no elements.
        expect(after.depth).toBeLessThanOrEqual(maxDepth + 1);
        expect(after.text).toBe(before.text);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('the HTML walks at any depth', () => {
  it('read 100,000 nested elements without overflowing the stack', () => {
    const html = `<title>Deep</title>${'<div><span>'.repeat(50_000)}deep text`;
    expect(htmlToText(html)).toMatchObject({ title: 'Deep', text: 'deep text' });
    expect(htmlFragmentText(`${'<b>'.repeat(100_000)}bold`)).toBe('bold');
    const page = readableHtml(html);
    expect(page).toMatchObject({ method: 'visible_text', text: 'deep text' });
  });

  it('number 100,000 list items and find chrome under 100,000 headers in linear time', () => {
    const list = htmlToText(`<ol start="7">${'<li>item'.repeat(100_000)}</ol>`);
    expect(list.blocks).toHaveLength(100_000);
    expect(list.blocks[99_999]!.text).toBe('100006. item');
    const headers = htmlToText(
      `${'<header>SITE</header>'.repeat(50_000)}<article><header>Own header</header></article>`,
    );
    expect(headers.text).toBe('Own header');
  });
});
