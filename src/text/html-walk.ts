// Walking the visible part of an HTML document: what is never text (scripts, hidden elements), what
// is site chrome (navigation, asides, ads, the page's header and footer), and the walk itself.
import { documentNode, elementNode, textNode, type DomElement, type DomNode } from './html-dom.js';

/** Never visible, whatever the page. */
const invisibleTags = new Set([
  'script',
  'style',
  'noscript',
  'template',
  'head',
  'title',
  'svg',
  'math',
  'canvas',
  'iframe',
  'object',
  'embed',
  'video',
  'audio',
  'button',
  'select',
  'input',
  'textarea',
  'dialog',
]);

/** Site chrome around the content. */
const chromeTags = new Set(['nav', 'aside', 'form', 'menu']);
const chromeRoles = new Set([
  'navigation',
  'banner',
  'contentinfo',
  'complementary',
  'search',
  'menu',
  'menubar',
  'dialog',
]);
// Class or id words of ads and overlays (`ad`, `ads`, `ad-slot`, `advertisement`, `sponsored`, …).
const chromeNamePattern =
  /(?:^|[\s_-])(?:ads?|advert\w*|sponsor\w*|promo\w*|banner|cookie\w*|popup|paywall)(?:$|[\s_-])/i;

function isHidden(element: DomElement): boolean {
  if (element.hasAttribute('hidden')) return true;
  if (element.getAttribute('aria-hidden') === 'true') return true;
  const style = element.getAttribute('style') ?? '';
  return /(?:^|;)\s*(?:display\s*:\s*none|visibility\s*:\s*hidden)/i.test(style);
}

/** Class and id beyond this length are not read (real ones are short; the pattern backtracks). */
const maxNamesLength = 1000;

/** `inContent`: an ancestor is an <article>, <main> or <section>. */
function isChrome(element: DomElement, tag: string, inContent: boolean): boolean {
  if (chromeTags.has(tag)) return true;
  const role = element.getAttribute('role');
  if (role !== null && chromeRoles.has(role.toLowerCase())) return true;
  // A page's own header and footer (not an article's or a section's) are site chrome.
  if ((tag === 'header' || tag === 'footer') && !inContent) return true;
  const names = `${element.getAttribute('class') ?? ''} ${element.getAttribute('id') ?? ''}`;
  return chromeNamePattern.test(names.slice(0, maxNamesLength));
}

export interface WalkOptions {
  /** Leave out navigation, asides, forms, ads and the page's header and footer. */
  readonly dropChrome: boolean;
}

/** Elements inside which a <header> or <footer> belongs to the content, not to the site. */
const contentSectionTags = new Set(['article', 'main', 'section']);

/** The element's tag when it may hold visible content, else null. */
function visibleTag(element: DomElement, options: WalkOptions, inContent: boolean): string | null {
  const tag = element.localName.toLowerCase();
  if (invisibleTags.has(tag) || isHidden(element)) return null;
  if (options.dropChrome && isChrome(element, tag, inContent)) return null;
  return tag;
}

/** Whether `node` lies inside an <article>, <main> or <section> (it itself not counted). */
function startsInContent(node: DomNode): boolean {
  const parent = node.parentNode as Partial<DomElement> | null;
  return parent?.closest?.('article, main, section') != null;
}

/**
 * Visits the visible nodes under `root` (itself included) in document order, without recursion:
 * `enter` sees each element (it returns false to skip the element's children, or a function to
 * call after them) and `text` each text node. Every node is visited once: linear in the tree.
 */
export function walkVisible(
  root: DomNode,
  options: WalkOptions,
  visit: {
    enter(element: DomElement, tag: string): boolean | (() => void);
    text(node: DomNode): void;
  },
): void {
  type Step = DomNode | (() => void);
  const steps: Step[] = [root];
  let contentDepth = startsInContent(root) ? 1 : 0;
  while (steps.length > 0) {
    const step = steps.pop()!;
    if (typeof step === 'function') {
      step();
      continue;
    }
    if (step.nodeType === textNode) {
      visit.text(step);
      continue;
    }
    if (step.nodeType !== elementNode && step.nodeType !== documentNode) continue;
    if (step.nodeType === elementNode) {
      const element = step as DomElement;
      const tag = visibleTag(element, options, contentDepth > 0);
      if (tag === null) continue;
      const entered = visit.enter(element, tag);
      if (entered === false) continue;
      const isContent = contentSectionTags.has(tag);
      if (isContent) contentDepth += 1;
      if (isContent || typeof entered === 'function') {
        steps.push(() => {
          if (isContent) contentDepth -= 1;
          if (typeof entered === 'function') entered();
        });
      }
    }
    const children = step.childNodes;
    for (let index = children.length - 1; index >= 0; index -= 1) steps.push(children[index]!);
  }
}
