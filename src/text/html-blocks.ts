// HTML as blocks of text: paragraphs, list items, table rows and <pre> under their headings, and the
// one-line text of an element (headings, table cells, snippets).
import type { BlockCollector, BlockKind } from './blocks.js';
import type { DomElement, DomNode } from './html-dom.js';
import { walkVisible, type WalkOptions } from './html-walk.js';
import { collapseWhitespace } from './plain-text.js';

/** Elements that end the running paragraph. */
const blockTags = new Set([
  'address',
  'article',
  'blockquote',
  'body',
  'caption',
  'center',
  'dd',
  'details',
  'div',
  'dl',
  'dt',
  'fieldset',
  'figcaption',
  'figure',
  'footer',
  'header',
  'hgroup',
  'hr',
  'html',
  'legend',
  'li',
  'main',
  'ol',
  'p',
  'section',
  'summary',
  'table',
  'tbody',
  'td',
  'tfoot',
  'th',
  'thead',
  'tr',
  'ul',
]);

/** Elements whose items or rows stand on consecutive lines, apart from what follows. */
const groupTags = new Set(['ul', 'ol', 'dl', 'table']);

/** The visible text inside `node` on one line (headings, table cells, snippets). */
export function inlineText(node: DomNode, options: WalkOptions): string {
  const parts: string[] = [];
  walkVisible(node, options, {
    enter(element, tag) {
      if (tag === 'img') parts.push(` ${element.getAttribute('alt') ?? ''} `);
      if (blockTags.has(tag) || tag === 'br') parts.push(' ');
      return true;
    },
    text(text) {
      parts.push(text.textContent ?? '');
    },
  });
  return collapseWhitespace(parts.join(''));
}

/** Adds the blocks and headings under `root` to `collector`, in document order. */
export function collectBlocks(
  root: DomNode,
  collector: BlockCollector,
  options: WalkOptions,
): void {
  let buffer = '';
  let bufferKind: BlockKind = 'prose';
  let groupDepth = 0;
  const flush = () => {
    collector.block(bufferKind, buffer);
    buffer = '';
    bufferKind = 'prose';
  };
  const markers = new ListMarkers();

  walkVisible(root, options, {
    text(node) {
      // Outside <pre>, line breaks in the markup are just spaces.
      buffer += (node.textContent ?? '').replace(/\s+/g, ' ');
    },
    enter(element, tag) {
      const headingLevel = /^h([1-6])$/.exec(tag);
      if (headingLevel !== null) {
        flush();
        collector.heading(Number(headingLevel[1]), inlineText(element, options));
        return false;
      }
      switch (tag) {
        case 'pre':
          flush();
          collector.block('code', element.textContent ?? '');
          return false;
        case 'br':
          buffer += '\n';
          return false;
        case 'img': {
          const alt = element.getAttribute('alt');
          if (alt !== null && alt.trim() !== '') buffer += ` ${alt} `;
          return false;
        }
        case 'tr': {
          flush();
          const cells = Array.from(element.children)
            .filter((cell) => cell.localName === 'td' || cell.localName === 'th')
            .map((cell) => inlineText(cell, options))
            .filter((cell) => cell !== '');
          collector.block('item', cells.join(' | '));
          return false;
        }
        case 'li': {
          flush();
          buffer = `${markers.of(element)} `;
          bufferKind = 'item';
          return flush;
        }
      }
      const isBlock = blockTags.has(tag);
      const isGroup = groupTags.has(tag);
      if (isBlock) flush();
      if (isGroup) groupDepth += 1;
      if (!isBlock && !isGroup) return true;
      return () => {
        if (isGroup) groupDepth -= 1;
        if (isBlock) flush();
        // A nested list continues its parent's lines.
        if (isGroup && groupDepth === 0) collector.endGroup();
      };
    },
  });
  flush();
}

/** `-`, or the item's number in an ordered list (counting from its `start`). */
class ListMarkers {
  /** Per ordered list, the number of each of its items (computed once per list). */
  private readonly numbers = new Map<DomElement, Map<DomElement, number>>();

  of(item: DomElement): string {
    const list = item.parentNode as Partial<DomElement> | null;
    if (list?.localName !== 'ol' || list.getAttribute === undefined) return '-';
    const ordered = list as DomElement;
    let numbers = this.numbers.get(ordered);
    if (numbers === undefined) {
      const start = Number(ordered.getAttribute('start') ?? '1');
      const first = Number.isFinite(start) ? start : 1;
      numbers = new Map(
        Array.from(ordered.children)
          .filter((child) => child.localName === 'li')
          .map((child, index) => [child, first + index]),
      );
      this.numbers.set(ordered, numbers);
    }
    return `${numbers.get(item) ?? 1}.`;
  }
}
