// Turns Markdown blocks into a flat list of allow-listed components in reading order, each with an
// id derived from its content, while noting what the message contains (its content types and
// measures) for the template choice of layout-engine.ts.
import type { MarkdownToken, MarkdownTokens } from '../../text/markdown.js';
import type { ComponentConfig, ComponentType, LayoutComponent } from './components.js';
import type { ContentMeasures, ContentType } from './templates.js';

type InlineToken = MarkdownToken & { tokens?: InlineToken[]; text?: string; href?: string };

const calloutVariants = {
  note: 'note',
  tip: 'tip',
  important: 'important',
  warning: 'warning',
  caution: 'caution',
  info: 'note',
  danger: 'caution',
} as const;
const calloutPattern =
  /^\s*(?:\[!(note|tip|important|warning|caution)\]|\*{0,2}(note|tip|important|warning|caution|info|danger)\*{0,2}\s*:\*{0,2})\s*/i;
const displayMath = /^\s*(?:\$\$([\s\S]+?)\$\$|\\\[([\s\S]+?)\\\])\s*$/;
const inlineMath = /(?<![\\$\w])\$(?!\s)[^$\n]+?(?<!\s)\$(?!\w)|\\\(.+?\\\)/;
export const sourcesHeading =
  /^(sources|references|citations|bibliography|further reading|links)$/i;
const numericCell =
  /^\s*[-+]?[$€£¥]?\s?\d{1,3}(?:[,\s]\d{3})*(?:\.\d+)?\s?%?\s*$|^\s*[-+]?[$€£¥]?\s?\d+(?:\.\d+)?\s?%?\s*$/;
const timeLabel =
  /^(?:(?:19|20)\d{2}(?:[-/]\d{1,2}(?:[-/]\d{1,2})?)?|q[1-4](?:\s*(?:19|20)?\d{2})?|(?:19|20)\d{2}\s*q[1-4]|jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:tember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?|mon|tue|wed|thu|fri|sat|sun|week\s*\d+|day\s*\d+|h[12]\s*(?:19|20)?\d{2})(?:\s+(?:19|20)?\d{2})?$/i;
const labelledNumber = /^(.{1,80}?)\s*[:=–-]\s*([-+]?[$€£¥]?\s?[\d,]+(?:\.\d+)?\s?%?)\s*$/;

function fnv1a(text: string): string {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index += 1) {
    hash = Math.imul(hash ^ text.charCodeAt(index), 0x01000193);
  }
  return (hash >>> 0).toString(36).padStart(7, '0');
}

function parseNumber(text: string): number | null {
  if (!numericCell.test(text)) return null;
  const value = Number(text.replace(/[$€£¥,\s%]/g, ''));
  return Number.isFinite(value) ? value : null;
}

/** Plain text of inline tokens (formatting dropped, link texts kept). */
function plain(tokens: readonly InlineToken[] | undefined, fallback: string): string {
  if (tokens === undefined || tokens.length === 0) return fallback.trim();
  let text = '';
  for (const token of tokens) {
    if (token.type === 'br') text += '\n';
    else if (token.tokens !== undefined && token.tokens.length > 0) text += plain(token.tokens, '');
    else if (token.type === 'image') text += (token as MarkdownTokens.Image).text;
    else if (token.type === 'html') text += '';
    else if (typeof token.text === 'string') text += decodeEntities(token.text);
  }
  return text.trim();
}

function decodeEntities(text: string): string {
  return text
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

/** Every link (not image) in inline tokens, depth first. */
function linksOf(
  tokens: readonly InlineToken[] | undefined,
  found: { title: string; url: string }[],
) {
  for (const token of tokens ?? []) {
    if (token.type === 'link') {
      const link = token as MarkdownTokens.Link;
      found.push({ title: plain(token.tokens, link.text) || link.href, url: link.href });
    } else if (token.tokens !== undefined) {
      linksOf(token.tokens, found);
    }
  }
}

/** One message's components, content types, links and measures, built block by block. */
export class Builder {
  readonly components: LayoutComponent[] = [];
  readonly types = new Set<ContentType>();
  readonly links: { title: string; url: string }[] = [];
  private readonly seen = new Map<string, number>();
  sourcesFromSection: { title: string; url: string }[] | null = null;
  measures = {
    words: 0,
    headings: 0,
    paragraphs: 0,
    listItems: 0,
    steps: 0,
    codeBlocks: 0,
    codeCharacters: 0,
    characters: 0,
    tables: 0,
    links: 0,
  } satisfies ContentMeasures;

  add<T extends ComponentType>(type: T, config: ComponentConfig<T>): string {
    const base = `${type}-${fnv1a(`${type}\u0000${JSON.stringify(config)}`)}`;
    const occurrence = (this.seen.get(base) ?? 0) + 1;
    this.seen.set(base, occurrence);
    const id = occurrence === 1 ? base : `${base}-${occurrence}`;
    this.components.push({ type, id, config } as LayoutComponent);
    return id;
  }

  block(token: MarkdownToken, previousHeading: string | null): void {
    switch (token.type) {
      case 'heading': {
        const heading = token as MarkdownTokens.Heading;
        this.types.add('headings');
        this.measures.headings += 1;
        this.add('heading', { text: plain(heading.tokens, heading.text), level: heading.depth });
        return;
      }
      case 'paragraph':
      case 'text': {
        const paragraph = token as MarkdownTokens.Paragraph;
        this.paragraph(paragraph.text, paragraph.tokens ?? []);
        return;
      }
      case 'list':
        this.list(token as MarkdownTokens.List, previousHeading);
        return;
      case 'code': {
        const code = token as MarkdownTokens.Code;
        const language = (code.lang ?? '').trim().split(/\s+/)[0] ?? '';
        if (/^(math|latex|tex|katex)$/i.test(language)) {
          this.types.add('math');
          this.add('math', { expression: code.text.trim(), display: true });
          return;
        }
        this.types.add('code');
        this.measures.codeBlocks += 1;
        this.measures.codeCharacters += code.text.length;
        this.add('code', {
          language: language === '' ? 'text' : language.toLowerCase(),
          code: code.text,
          lines: code.text === '' ? 0 : code.text.split('\n').length,
        });
        return;
      }
      case 'table':
        this.table(token as MarkdownTokens.Table);
        return;
      case 'blockquote':
        this.blockquote(token as MarkdownTokens.Blockquote);
        return;
      case 'hr':
        this.add('divider', {});
        return;
      case 'html': {
        const html = token as MarkdownTokens.HTML;
        const text = decodeEntities(html.text.replace(/<[^>]*>/g, ' '))
          .replace(/\s+/g, ' ')
          .trim();
        if (text !== '') this.addText(text, text);
        return;
      }
      default:
        return;
    }
  }

  private addText(markdown: string, text: string): void {
    this.types.add('text');
    this.measures.paragraphs += 1;
    this.measures.words += text.split(/\s+/).filter(Boolean).length;
    this.add('text', { markdown, text });
  }

  private paragraph(source: string, tokens: readonly InlineToken[]): void {
    const display = displayMath.exec(source);
    if (display !== null) {
      this.types.add('math');
      this.add('math', { expression: (display[1] ?? display[2] ?? '').trim(), display: true });
      return;
    }
    const meaningful = tokens.filter(
      (token) => !(token.type === 'text' && (token.text ?? '').trim() === ''),
    );
    if (meaningful.length === 1 && meaningful[0]!.type === 'image') {
      const image = meaningful[0] as MarkdownTokens.Image;
      this.types.add('image');
      this.add('image', { url: image.href, alt: image.text });
      return;
    }
    if (inlineMath.test(source)) this.types.add('math');
    const found: { title: string; url: string }[] = [];
    linksOf(tokens, found);
    this.noteLinks(found);
    const text = plain(tokens, source);
    if (text === '') return;
    this.addText(source.trim(), text);
  }

  private noteLinks(found: { title: string; url: string }[]): void {
    if (found.length === 0) return;
    this.types.add('links');
    this.measures.links += found.length;
    this.links.push(...found);
  }

  private list(list: MarkdownTokens.List, previousHeading: string | null): void {
    const items = list.items.map(listItemOf);
    // A list of links under a "Sources"/"References" heading is the sources component.
    if (
      previousHeading !== null &&
      sourcesHeading.test(previousHeading) &&
      items.length > 0 &&
      items.every((item) => item.links.length > 0)
    ) {
      this.sourcesFromSection = [
        ...(this.sourcesFromSection ?? []),
        ...items.flatMap((item) => item.links),
      ];
      this.types.add('links');
      this.measures.links += items.length;
      return;
    }
    for (const item of items) this.noteLinks(item.links);
    this.measures.words += items.reduce((sum, item) => sum + item.text.split(/\s+/).length, 0);
    if (list.ordered) {
      this.steps(items, typeof list.start === 'number' ? list.start : 1);
      return;
    }
    this.types.add('list');
    this.measures.listItems += items.length;
    const listId = this.add('list', {
      items: items.map(({ text, markdown, checked, children }) => ({
        text,
        markdown,
        checked,
        children,
      })),
    });
    this.seriesChart(items, listId, previousHeading);
  }

  private steps(items: readonly ListItem[], start: number): void {
    this.types.add('steps');
    this.measures.steps += items.length;
    this.measures.listItems += items.length;
    this.add('steps', {
      steps: items.map((item, index) => ({
        number: start + index,
        text: item.text,
        markdown: item.markdown,
      })),
    });
  }

  /** "Label: number" items (three or more) are a series worth a chart. */
  private seriesChart(items: readonly ListItem[], listId: string, heading: string | null): void {
    const series = items.map((item) => labelledNumber.exec(item.text));
    if (items.length < 3 || !series.every((match) => match !== null)) return;
    const labels = series.map((match) => match[1]!.trim());
    const data = series.map((match) => parseNumber(match[2]!));
    if (!data.every((value) => value !== null)) return;
    this.types.add('chart_data');
    this.add('chart', {
      chart_type: labels.every((label) => timeLabel.test(label)) ? 'line' : 'bar',
      labels,
      datasets: [{ label: heading ?? 'Value', data }],
      source: listId,
    });
  }

  private table(table: MarkdownTokens.Table): void {
    this.types.add('table');
    this.measures.tables += 1;
    const header = table.header.map((cell) => plain(cell.tokens as InlineToken[], cell.text));
    const body = table.rows.map((row) =>
      row.map((cell) => plain(cell.tokens as InlineToken[], cell.text)),
    );
    for (const row of table.rows) {
      for (const cell of row) {
        const found: { title: string; url: string }[] = [];
        linksOf(cell.tokens, found);
        this.noteLinks(found);
      }
    }
    const numeric = header.map(
      (_, column) =>
        body.some((row) => (row[column] ?? '') !== '') &&
        body.every((row) => (row[column] ?? '') === '' || parseNumber(row[column]!) !== null),
    );
    const tableId = this.add('table', {
      columns: header.map((label, column) => ({
        key: `c${column}`,
        label,
        align: table.align[column] ?? null,
        numeric: numeric[column]!,
      })),
      rows: body.map((row) =>
        header.map((_, column) => {
          const cell = row[column] ?? '';
          if (cell === '') return null;
          return numeric[column] ? parseNumber(cell) : cell;
        }),
      ),
    });
    // A label column and numeric columns over two or more rows make a chart.
    const labelColumn = numeric.findIndex((isNumeric) => !isNumeric);
    const valueColumns = numeric.flatMap((isNumeric, column) => (isNumeric ? [column] : []));
    const labelsAreYears =
      labelColumn < 0 &&
      valueColumns.length >= 2 &&
      body.every((row) => /^(19|20)\d{2}$/.test(row[0] ?? ''));
    const labelIndex = labelsAreYears ? 0 : labelColumn;
    const series = valueColumns.filter((column) => column !== labelIndex);
    if (labelIndex >= 0 && series.length > 0 && body.length >= 2) {
      const labels = body.map((row) => row[labelIndex] ?? '');
      this.types.add('chart_data');
      this.add('chart', {
        chart_type: labels.every((label) => timeLabel.test(label.trim())) ? 'line' : 'bar',
        labels,
        datasets: series.map((column) => ({
          label: header[column]!,
          data: body.map((row) => parseNumber(row[column] ?? '')),
        })),
        source: tableId,
      });
    }
  }

  private blockquote(quote: MarkdownTokens.Blockquote): void {
    const source = quote.text.trim();
    const callout = calloutPattern.exec(source);
    if (callout !== null) {
      const name = (
        callout[1] ??
        callout[2] ??
        'note'
      ).toLowerCase() as keyof typeof calloutVariants;
      const markdown = source.slice(callout[0].length).trim();
      this.types.add('callout');
      this.add('callout', {
        variant: calloutVariants[name],
        markdown,
        text: markdown.replace(/[*_`]/g, '').trim(),
      });
      return;
    }
    const paragraphs = (quote.tokens ?? []) as InlineToken[];
    const lines = paragraphs
      .map((token) => plain(token.tokens, token.text ?? ''))
      .join('\n')
      .split('\n')
      .map((line) => line.trim())
      .filter(Boolean);
    let attribution: string | null = null;
    const last = lines[lines.length - 1];
    if (last !== undefined && lines.length > 1 && /^(—|–|--|-)\s*\S/.test(last)) {
      attribution = last.replace(/^(—|–|--|-)\s*/, '');
      lines.pop();
    }
    const found: { title: string; url: string }[] = [];
    for (const token of paragraphs) linksOf(token.tokens, found);
    this.noteLinks(found);
    this.types.add('quote');
    this.add('quote', { text: lines.join('\n'), attribution });
  }
}

interface ListItem {
  text: string;
  markdown: string;
  checked: boolean | null;
  children: string[];
  links: { title: string; url: string }[];
}

/** One list item: its own text (nested lists apart), its children's text, and its links. */
function listItemOf(item: MarkdownTokens.ListItem): ListItem {
  const tokens = (item.tokens ?? []) as InlineToken[];
  const own = tokens.filter((token) => token.type !== 'list');
  const nested = tokens.filter((token) => token.type === 'list') as MarkdownTokens.List[];
  const inline = own.flatMap((token) => token.tokens ?? []);
  const found: { title: string; url: string }[] = [];
  linksOf(inline, found);
  return {
    text: plain(inline, own.map((token) => ('text' in token ? String(token.text) : '')).join(' ')),
    markdown: own
      .map((token) => ('text' in token ? String(token.text) : ''))
      .join('\n')
      .trim(),
    checked: item.task ? (item.checked ?? false) : null,
    children: nested.flatMap((child) =>
      child.items.map((entry) => plain((entry.tokens ?? []) as InlineToken[], entry.text)),
    ),
    links: found,
  };
}
