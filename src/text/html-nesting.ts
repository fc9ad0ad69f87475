// HTML nested deeper than any page needs, flattened before linkedom parses it. linkedom's parser
// (htmlparser2) keeps its open elements in an array it shifts and unshifts at the front, so every
// tag costs time in the depth: 100,000 nested <div> take about 40 s to parse, a million hours.
//
// The bound runs htmlparser2's own tokenizer (linkedom's copy of it) over the text and follows the
// parser's stack of open elements with the parser's rules (void elements, tags that close others,
// SVG and MathML); a start tag that would open an element deeper than the bound is replaced by an
// empty processing instruction `<?>`, so its text and children land in the element above. `<?>`
// ends at its own `>` in every state the tokenizer can be in there, so the tokens around it read
// exactly as before and the parser, given the result, sees the stack followed here; linkedom makes
// no node of it. Start tags of raw-text elements (script, style, title, textarea, xmp) are always
// kept, since dropping one would turn its raw text into markup; they cannot contain elements, so
// they add one level at most.
import { createRequire } from 'node:module';
import type * as Htmlparser2 from 'htmlparser2';

/** Elements nested deeper than this are flattened into their ancestor at this depth. */
export const maxHtmlDepth = 256;

const require = createRequire(import.meta.url);
let tokenizerClass: typeof Htmlparser2.Tokenizer | undefined;

/** The tokenizer of the htmlparser2 that linkedom loads, so that both read the text alike. */
function Tokenizer(): typeof Htmlparser2.Tokenizer {
  if (tokenizerClass === undefined) {
    const fromLinkedom = createRequire(require.resolve('linkedom'));
    tokenizerClass = (fromLinkedom('htmlparser2') as typeof Htmlparser2).Tokenizer;
  }
  return tokenizerClass;
}

// htmlparser2's Parser (10.x): which start tags close which open elements, void elements, and the
// elements that switch SVG/MathML handling of `/>` on and off.
const formTags = ['input', 'option', 'optgroup', 'select', 'button', 'datalist', 'textarea'];
const p = ['p'];
const openImpliesClose = new Map<string, ReadonlySet<string>>(
  (
    [
      ['tr', ['tr', 'th', 'td']],
      ['th', ['th']],
      ['td', ['thead', 'th', 'td']],
      ['body', ['head', 'link', 'script']],
      ['li', ['li']],
      ['select', formTags],
      ['input', formTags],
      ['output', formTags],
      ['button', formTags],
      ['datalist', formTags],
      ['textarea', formTags],
      ['option', ['option']],
      ['optgroup', ['optgroup', 'option']],
      ['dd', ['dd', 'dt']],
      ['dt', ['dd', 'dt']],
      ['rt', ['rt', 'rp']],
      ['rp', ['rt', 'rp']],
      ['tbody', ['thead', 'tbody']],
      ['tfoot', ['thead', 'tbody']],
      ...[
        'p',
        'h1',
        'h2',
        'h3',
        'h4',
        'h5',
        'h6',
        'address',
        'article',
        'aside',
        'blockquote',
        'details',
        'div',
        'dl',
        'fieldset',
        'figcaption',
        'figure',
        'footer',
        'form',
        'header',
        'hr',
        'main',
        'nav',
        'ol',
        'pre',
        'section',
        'table',
        'ul',
      ].map((name) => [name, p] as const),
    ] as const
  ).map(([name, closes]) => [name, new Set(closes)]),
);
const voidElements = new Set([
  'area',
  'base',
  'basefont',
  'br',
  'col',
  'command',
  'embed',
  'frame',
  'hr',
  'img',
  'input',
  'isindex',
  'keygen',
  'link',
  'meta',
  'param',
  'source',
  'track',
  'wbr',
]);
const foreignContextElements = new Set(['math', 'svg']);
const htmlIntegrationElements = new Set([
  'mi',
  'mo',
  'mn',
  'ms',
  'mtext',
  'annotation-xml',
  'foreignobject',
  'desc',
  'title',
]);
const rawTextElements = new Set(['script', 'style', 'title', 'textarea', 'xmp']);

/** The parser's stack of open elements, with counts so that "is it open?" costs no scan. */
class OpenElements {
  private readonly names: string[] = [];
  private readonly counts = new Map<string, number>();

  get depth(): number {
    return this.names.length;
  }

  get top(): string | undefined {
    return this.names[this.names.length - 1];
  }

  push(name: string): void {
    this.names.push(name);
    this.counts.set(name, (this.counts.get(name) ?? 0) + 1);
  }

  pop(): void {
    const name = this.names.pop();
    if (name !== undefined) this.counts.set(name, this.counts.get(name)! - 1);
  }

  has(name: string): boolean {
    return (this.counts.get(name) ?? 0) > 0;
  }

  /** Closes `name` and everything opened inside it. */
  closeThrough(name: string): void {
    while (this.names.length > 0) {
      const top = this.names[this.names.length - 1];
      this.pop();
      if (top === name) return;
    }
  }
}

export interface BoundedHtml {
  readonly html: string;
  /** Start tags replaced by `<?>`. */
  readonly flattened: number;
}

/** Whether `html` has more than `limit` tags (counting `<`, stopping past the limit). */
function hasMoreTagsThan(html: string, limit: number): boolean {
  let tags = 0;
  for (let at = html.indexOf('<'); at !== -1; at = html.indexOf('<', at + 1)) {
    tags += 1;
    if (tags > limit) return true;
  }
  return false;
}

const ignore = () => undefined;
/** The tokenizer's events that do not change the nesting: text, attributes, comments, … */
const ignoredTokens = {
  onattribdata: ignore,
  onattribentity: ignore,
  onattribend: ignore,
  onattribname: ignore,
  oncdata: ignore,
  oncomment: ignore,
  ondeclaration: ignore,
  onend: ignore,
  onprocessinginstruction: ignore,
  ontext: ignore,
  ontextentity: ignore,
};

/**
 * `html` with every start tag that would nest an element deeper than `maxDepth` (or SVG/MathML
 * contexts deeper than that) replaced by `<?>`. Linear in the length of `html`; a document
 * with fewer tags than `maxDepth` is returned as it is without being read.
 */
export function boundHtmlNesting(html: string, maxDepth = maxHtmlDepth): BoundedHtml {
  if (!hasMoreTagsThan(html, maxDepth)) return { html, flattened: 0 };

  const open = new OpenElements();
  // The parser's `foreignContext`: whether `/>` closes an element here (SVG, MathML).
  const foreign: boolean[] = [false];
  const pieces: string[] = [];
  let copiedUpTo = 0;
  let flattened = 0;
  let tagStart = -1;
  let tagName = '';

  const emitOpen = (name: string) => {
    const closes = openImpliesClose.get(name);
    if (closes !== undefined) {
      while (open.top !== undefined && closes.has(open.top)) open.pop();
    }
    if (!voidElements.has(name)) {
      open.push(name);
      if (foreignContextElements.has(name)) foreign.push(true);
      else if (htmlIntegrationElements.has(name)) foreign.push(false);
    }
  };

  const endOfStartTag = (endIndex: number, selfClosing: boolean) => {
    const name = tagName;
    const switchesContext = foreignContextElements.has(name) || htmlIntegrationElements.has(name);
    const keep =
      voidElements.has(name) ||
      (rawTextElements.has(name) && !selfClosing) ||
      (open.depth < maxDepth && (!switchesContext || foreign.length < maxDepth));
    if (!keep) {
      pieces.push(html.slice(copiedUpTo, tagStart), '<?>');
      copiedUpTo = endIndex + 1;
      flattened += 1;
      return;
    }
    emitOpen(name);
    // The parser honours `/>` only in SVG and MathML (its `foreignContext`, read after the push).
    if (selfClosing && foreign[foreign.length - 1] === true && open.top === name) open.pop();
  };

  const tokenizer = new (Tokenizer())(
    { xmlMode: false, decodeEntities: true },
    {
      onopentagname(start, endIndex) {
        tagStart = start - 1;
        tagName = html.slice(start, endIndex).toLowerCase();
      },
      onopentagend(endIndex) {
        endOfStartTag(endIndex, false);
      },
      onselfclosingtag(endIndex) {
        endOfStartTag(endIndex, true);
      },
      onclosetag(start, endIndex) {
        const name = html.slice(start, endIndex).toLowerCase();
        if (foreignContextElements.has(name) || htmlIntegrationElements.has(name)) foreign.pop();
        if (voidElements.has(name)) return;
        if (open.has(name)) open.closeThrough(name);
        // An unmatched </p> makes an empty <p>, which closes at once: no change in depth.
      },
      ...ignoredTokens,
    },
  );
  tokenizer.write(html);
  tokenizer.end();
  if (flattened === 0) return { html, flattened };
  pieces.push(html.slice(copiedUpTo));
  return { html: pieces.join(''), flattened };
}
