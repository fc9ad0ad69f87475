// The HTML DOM as the text toolkit reads it: the few DOM types it walks, and parsing with linkedom
// (loaded on first use), nesting bounded first (html-nesting.ts).
import { createRequire } from 'node:module';
import type * as ReadabilityModule from '@mozilla/readability';
import type * as LinkedomModule from 'linkedom';
import { boundHtmlNesting } from './html-nesting.js';

/*
 * The DOM as far as this module walks it. The project compiles without the DOM library, so
 * linkedom's and Readability's `Document`/`Node` types do not resolve; these name what is used.
 */
export interface DomNode {
  readonly nodeType: number;
  readonly textContent: string | null;
  readonly childNodes: ArrayLike<DomNode>;
  readonly parentNode: DomNode | null;
}

export interface DomElement extends DomNode {
  readonly localName: string;
  readonly children: ArrayLike<DomElement>;
  getAttribute(name: string): string | null;
  hasAttribute(name: string): boolean;
  closest(selectors: string): DomElement | null;
}

export interface DomDocument extends DomNode {
  readonly title: string;
  querySelector(selectors: string): DomElement | null;
  querySelectorAll(selectors: string): ArrayLike<DomElement>;
}

export const elementNode = 1;
export const textNode = 3;
export const documentNode = 9;

/*
 * linkedom and Readability weigh about 25 MiB once loaded, and most instances never read HTML:
 * they are required (their CommonJS builds, synchronously) the first time HTML is parsed.
 */
const require = createRequire(import.meta.url);
let linkedom: typeof LinkedomModule | undefined;
let readability: typeof ReadabilityModule | undefined;

function parseHTML(html: string): unknown {
  linkedom ??= require('linkedom') as typeof LinkedomModule;
  return linkedom.parseHTML(html);
}

export function readabilityClass(): typeof ReadabilityModule.Readability {
  readability ??= require('@mozilla/readability') as typeof ReadabilityModule;
  return readability.Readability;
}

/**
 * Parses `html`, its elements nested at most `maxHtmlDepth` deep (html-nesting.ts). linkedom is
 * not a full HTML5 parser: without an <html> element it drops content that browsers would put in
 * an implied body, so such documents and fragments get the wrappers written out.
 */
export function parseHtml(html: string): DomDocument {
  const complete = /<html[\s>]/i.test(html)
    ? html
    : `<html><head></head><body>${html}</body></html>`;
  return (parseHTML(boundHtmlNesting(complete).html) as { document: DomDocument }).document;
}
