// The service's one Markdown parser: marked's lexer (GitHub-flavoured: tables, task lists), whose
// tokens layouts and text extraction read instead of matching Markdown with regular expressions.
import { Lexer, type Token, type Tokens } from 'marked';

export type MarkdownToken = Token;
export type { Tokens as MarkdownTokens };

/** Block tokens of `markdown`, each with its inline `tokens` where it has text. */
export function lexMarkdown(markdown: string): MarkdownToken[] {
  return Lexer.lex(boundNesting(markdown), { gfm: true });
}

/** Containers (quotes, list items) one line may open; real documents stay far below. */
const maxMarkersPerLine = 16;
/** Columns of indentation before a list item; each nesting level takes two or more. */
const maxListIndent = 64;
const leadingMarkers = /^(?:[ \t]*(?:>|[-*+](?=[ \t])|\d{1,9}[.)](?=[ \t])))+/gm;
const deepListItem = /^[ \t]{65,}(?=(?:[-*+]|\d{1,9}[.)])[ \t])/gm;

/**
 * marked recurses once per nesting level: a few thousand `>` or list markers on one line overflow
 * the stack, and lists nested by indentation take time growing with the cube of their depth (a
 * thousand levels: seconds). Text nested deeper than any document needs is flattened to a bound.
 */
function boundNesting(markdown: string): string {
  return markdown
    .replace(leadingMarkers, (run) => {
      const markers = run.match(/[ \t]*(?:>|[-*+]|\d{1,9}[.)])/g) ?? [];
      return markers.length <= maxMarkersPerLine
        ? run
        : markers.slice(0, maxMarkersPerLine).join('');
    })
    .replace(deepListItem, ' '.repeat(maxListIndent));
}
