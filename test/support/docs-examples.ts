// The documentation as data. Its curl examples: every fenced `sh` block of a page is read with
// the shell's quoting rules (quotes, `\` continuations, `$VAR`, comments), each `curl` command
// becomes a request, and the comment that follows it says what status it answers; requests are
// made with fetch rather than a curl binary, so the check runs the same wherever the suite runs.
// `-F` builds a multipart form (`@file` from what an earlier `-o file` saved, else the repository)
// and `-o` keeps an answer's bytes under that name for later examples.
// Its links and headings: read with marked's lexer (code blocks are not links), headings slugged
// the way GitHub makes their anchors.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { marked, type Token } from 'marked';

/**
 * One piece of a shell word: literal text, a variable to expand when the command runs, or a
 * command substitution (`$(…)`; only `base64 -w0 FILE` is run, reading FILE from the repository).
 */
type WordPart = { literal: string } | { variable: string } | { substitution: string };

interface ShellLine {
  words: WordPart[][];
  /** An unquoted operator (`|`, `;`, `&&`, `>` …) that a plain curl example never needs. */
  operators: string[];
  comment: string | null;
  /** 1-based line of the page where the line starts. */
  line: number;
}

/** Splits shell text into logical lines of words, as sh would read them (no execution). */
export function readShell(text: string, firstLine = 1): ShellLine[] {
  const lines: ShellLine[] = [];
  let line = firstLine;
  let current: ShellLine = { words: [], operators: [], comment: null, line };
  let word: WordPart[] | null = null;
  const addLiteral = (literal: string) => {
    word ??= [];
    const last = word.at(-1);
    if (last !== undefined && 'literal' in last) last.literal += literal;
    else word.push({ literal });
  };
  const endWord = () => {
    if (word !== null) current.words.push(word);
    word = null;
  };
  const endLine = () => {
    endWord();
    lines.push(current);
    current = { words: [], operators: [], comment: null, line };
  };
  /** Reads `$NAME`, `${NAME}` or `$(command)` at `index` (the `$`); returns the index after it. */
  const readVariable = (index: number): number => {
    if (text[index + 1] === '(') {
      const end = text.indexOf(')', index + 2);
      if (end === -1) throw new Error(`line ${line}: unterminated $(`);
      word ??= [];
      word.push({ substitution: text.slice(index + 2, end).trim() });
      return end + 1;
    }
    const braced = /^\$\{([A-Za-z_][A-Za-z0-9_]*)\}/.exec(text.slice(index));
    const plain = /^\$([A-Za-z_][A-Za-z0-9_]*)/.exec(text.slice(index));
    const match = braced ?? plain;
    if (match === null) {
      addLiteral('$');
      return index + 1;
    }
    word ??= [];
    word.push({ variable: match[1]! });
    return index + match[0].length;
  };
  let index = 0;
  while (index < text.length) {
    const char = text[index]!;
    if (char === '\n') {
      line += 1;
      endLine();
      index += 1;
    } else if (char === ' ' || char === '\t') {
      endWord();
      index += 1;
    } else if (char === '\\') {
      if (text[index + 1] === '\n') line += 1;
      else addLiteral(text[index + 1] ?? '');
      index += 2;
    } else if (char === "'") {
      const end = text.indexOf("'", index + 1);
      if (end === -1) throw new Error(`line ${line}: unterminated single quote`);
      const literal = text.slice(index + 1, end);
      addLiteral(literal);
      line += literal.split('\n').length - 1;
      index = end + 1;
    } else if (char === '"') {
      word ??= [];
      index += 1;
      while (text[index] !== '"') {
        if (index >= text.length) throw new Error(`line ${line}: unterminated double quote`);
        const inner = text[index]!;
        if (inner === '\\' && '"\\$`\n'.includes(text[index + 1] ?? '')) {
          if (text[index + 1] !== '\n') addLiteral(text[index + 1]!);
          else line += 1;
          index += 2;
        } else if (inner === '$') {
          index = readVariable(index);
        } else {
          if (inner === '\n') line += 1;
          addLiteral(inner);
          index += 1;
        }
      }
      index += 1;
    } else if (char === '$') {
      index = readVariable(index);
    } else if (char === '#' && word === null) {
      const end = text.indexOf('\n', index);
      current.comment = text.slice(index + 1, end === -1 ? text.length : end).trim();
      index = end === -1 ? text.length : end;
    } else if ('|&;<>()`'.includes(char)) {
      endWord();
      const operator = /^(\|\||&&|>>|[|&;<>()`])/.exec(text.slice(index))![0];
      current.operators.push(operator);
      index += operator.length;
    } else {
      addLiteral(char);
      index += 1;
    }
  }
  endLine();
  return lines;
}

/** A command of a page's `sh` block, with the comment that documents its answer. */
export interface ShellCommand {
  /** 1-based line in the page. */
  line: number;
  words: WordPart[][];
  operators: string[];
  /** The status the comment promises (`# 201 …`, `… # 202 …`), or null: any 2xx. */
  expectedStatus: number | null;
  /** The documented answer (the comment after the status), when there is one. */
  documented: string | null;
  /** The whole comment on the command's line or the line after it. */
  comment: string | null;
}

/** Every command of every fenced `sh` block of a Markdown text, in order. */
export function shellCommands(markdown: string): ShellCommand[] {
  const commands: ShellCommand[] = [];
  const fence = /^```sh[ \t]*\n([\s\S]*?)^```/gm;
  for (const match of markdown.matchAll(fence)) {
    const firstLine = markdown.slice(0, match.index).split('\n').length + 1;
    const lines = readShell(match[1]!, firstLine);
    lines.forEach((shellLine, position) => {
      if (shellLine.words.length === 0) return;
      // The answer is documented on the command's own line or on the comment line right after.
      const next = lines[position + 1];
      const comment =
        shellLine.comment ??
        (next !== undefined && next.words.length === 0 ? next.comment : null) ??
        null;
      const promised = comment === null ? null : /^(?:→\s*)?(\d{3})(?:\s+|$)/.exec(comment);
      const documented =
        comment === null ? null : comment.slice(promised?.[0].length ?? 0).replace(/^→\s*/, '');
      commands.push({
        line: shellLine.line,
        words: shellLine.words,
        operators: shellLine.operators,
        expectedStatus: promised === null ? null : Number(promised[1]),
        documented: documented !== null && /^[[{]/.test(documented) ? documented : null,
        comment,
      });
    });
  }
  return commands;
}

/** `$(command)`: the one substitution the examples use, a file's base64 on one line. */
function substitute(command: string, root: string): string {
  const base64File = /^base64 -w0 (\S+)$/.exec(command);
  if (base64File === null) {
    throw new Error(`$(${command}) is not a substitution the docs check runs; add it there`);
  }
  return readFileSync(path.resolve(root, base64File[1]!)).toString('base64');
}

/** Expands a word's variables; an unset variable is an error, not an empty string. */
export function expandWord(
  word: WordPart[],
  variables: ReadonlyMap<string, string>,
  root = process.cwd(),
): string {
  return word
    .map((part) => {
      if ('literal' in part) return part.literal;
      if ('substitution' in part) return substitute(part.substitution, root);
      const value = variables.get(part.variable);
      if (value === undefined) {
        throw new Error(`$${part.variable} is used before the page sets it (export it first)`);
      }
      return value;
    })
    .join('');
}

/** Placeholders such as `conv_…`, `kb_…`, `sk-…`: a prefix and the ellipsis. */
const placeholderPattern = /\b([a-z]+_|sk-)…/g;
/** A value one of those placeholders stands for: an id the service made, or a full API key. */
const valuePattern = /^(?:([a-z]+_)[A-Za-z0-9]{8,}|(sk-)[A-Za-z0-9]{40,})$/;

/**
 * The ids and keys earlier examples received, by prefix: those in answers to a POST (what the
 * examples created) come first, those merely read elsewhere only when nothing was created.
 */
export class ReceivedValues {
  private readonly created = new Map<string, string>();
  private readonly seen = new Map<string, string>();
  /** The latest string value of every JSON field name received. */
  private readonly fields = new Map<string, string>();

  record(value: unknown, createdByRequest: boolean): void {
    const target = createdByRequest ? this.created : this.seen;
    const walk = (item: unknown) => {
      if (typeof item === 'string') {
        const match = valuePattern.exec(item);
        if (match !== null) target.set(match[1] ?? match[2]!, item);
      } else if (Array.isArray(item)) item.forEach(walk);
      else if (item !== null && typeof item === 'object') {
        for (const [key, field] of Object.entries(item)) {
          if (typeof field === 'string') this.fields.set(key, field);
          walk(field);
        }
      }
    };
    walk(value);
  }

  /** The latest value of a field named in `comment` (`# the session's csrf_token …`). */
  fieldNamedIn(comment: string): string | undefined {
    const named = [...comment.matchAll(/[a-z]+(?:_[a-z]+)+/g)].map((match) => match[0]);
    return named.map((name) => this.fields.get(name)).find((value) => value !== undefined);
  }

  /** `text` with each placeholder replaced by the latest value of its prefix. */
  fill(text: string): string {
    return text.replace(placeholderPattern, (placeholder, prefix: string) => {
      const value = this.created.get(prefix) ?? this.seen.get(prefix);
      if (value === undefined) {
        throw new Error(`no earlier example received a value for the placeholder ${placeholder}`);
      }
      return value;
    });
  }

  static isPlaceholder(text: string): boolean {
    return new RegExp(placeholderPattern.source).test(text);
  }
}

/** A `-F` field: text, or a file's content (`name=@path`, with curl's `;type=` and `;filename=`). */
export type CurlFormField =
  | { name: string; value: string }
  | { name: string; file: string; type: string | undefined; filename: string | undefined };

export interface CurlRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string | undefined;
  /** `-F` fields: a multipart/form-data body (its Content-Type and boundary are fetch's). */
  form: CurlFormField[] | undefined;
  /** `-o FILE` / `--output FILE`: where the answer's bytes go instead of being read as text. */
  output: string | undefined;
  /** `-c FILE`: the cookie jar the answer's cookies go to. */
  cookieJarOut: string | undefined;
  /** `-b FILE` (a cookie jar to send) or `-b 'name=value'` (cookies to send as they are). */
  cookies: string | undefined;
}

const flagsWithoutValue = new Set([
  '-N',
  '--no-buffer',
  '-s',
  '--silent',
  '-S',
  '--show-error',
  '-i',
  '--include',
  '-f',
  '--fail',
  '-v',
  '--verbose',
]);

/** `name=value` or `name=@path;type=…;filename=…`, as curl's `-F` reads it. */
export function curlFormField(spec: string): CurlFormField {
  const equals = spec.indexOf('=');
  if (equals <= 0) throw new Error(`curl -F without a name: ${spec}`);
  const name = spec.slice(0, equals);
  const content = spec.slice(equals + 1);
  if (content.startsWith('<')) {
    throw new Error(
      `curl -F ${name}=<file (a file's text as the value) is not supported by the docs check`,
    );
  }
  if (!content.startsWith('@')) return { name, value: content };
  const [file = '', ...options] = content.slice(1).split(';');
  const option = (key: string) =>
    options.find((item) => item.startsWith(`${key}=`))?.slice(key.length + 1);
  return { name, file, type: option('type'), filename: option('filename') };
}

/** The request curl would send for these arguments (the options the docs use and a few more). */
export function curlRequest(args: readonly string[]): CurlRequest {
  let method: string | undefined;
  let url: string | undefined;
  const headers: Record<string, string> = { accept: '*/*', 'user-agent': 'curl/8 (docs check)' };
  const data: string[] = [];
  const form: CurlFormField[] = [];
  let output: string | undefined;
  let json = false;
  let cookieJarOut: string | undefined;
  let cookies: string | undefined;
  for (let index = 0; index < args.length; index += 1) {
    const arg = args[index]!;
    const value = () => {
      const next = args[index + 1];
      if (next === undefined) throw new Error(`curl option ${arg} needs a value`);
      index += 1;
      return next;
    };
    if (flagsWithoutValue.has(arg)) continue;
    if (/^-[NsSifv]{2,}$/.test(arg)) continue;
    switch (arg) {
      case '-X':
      case '--request':
        method = value();
        break;
      case '-H':
      case '--header': {
        const header = value();
        const colon = header.indexOf(':');
        if (colon <= 0) throw new Error(`curl header without a name: ${header}`);
        headers[header.slice(0, colon).trim().toLowerCase()] = header.slice(colon + 1).trim();
        break;
      }
      case '-d':
      case '--data':
      case '--data-raw':
      case '--data-binary': {
        const datum = value();
        if (datum.startsWith('@') && arg !== '--data-raw') {
          throw new Error(`curl data from a file (${datum}) is not supported by the docs check`);
        }
        data.push(datum);
        break;
      }
      case '--json':
        data.push(value());
        json = true;
        break;
      case '-F':
      case '--form':
        form.push(curlFormField(value()));
        break;
      case '-o':
      case '--output':
        output = value();
        break;
      case '-c':
      case '--cookie-jar':
        cookieJarOut = value();
        break;
      case '-b':
      case '--cookie':
        cookies = value();
        break;
      default:
        if (arg.startsWith('-')) {
          throw new Error(`curl option ${arg} is not understood by the docs check; add it there`);
        }
        if (url !== undefined) throw new Error(`curl given two URLs: ${url} and ${arg}`);
        url = arg;
    }
  }
  if (url === undefined) throw new Error('curl without a URL');
  if (form.length > 0 && data.length > 0) throw new Error('curl given both -F and -d');
  const body = data.length === 0 ? undefined : data.join('&');
  if (body !== undefined) {
    // curl's own defaults: a form body, unless --json or a Content-Type header says otherwise.
    headers['content-type'] ??= json ? 'application/json' : 'application/x-www-form-urlencoded';
    if (json) headers.accept = 'application/json';
  }
  return {
    method: method ?? (body === undefined && form.length === 0 ? 'GET' : 'POST'),
    url,
    headers,
    body,
    form: form.length === 0 ? undefined : form,
    output,
    cookieJarOut,
    cookies,
  };
}

/** Keys (`"name":`) and literal string values (`"name":"value"`, no `…`) a documented answer shows. */
export function documentedFields(documented: string): {
  keys: string[];
  values: Array<[string, string]>;
} {
  const keys = [...documented.matchAll(/"([A-Za-z_][A-Za-z0-9_]*)"\s*:/g)].map(
    (match) => match[1]!,
  );
  const values = [...documented.matchAll(/"([A-Za-z_][A-Za-z0-9_]*)"\s*:\s*"([^"…]*)"/g)].map(
    (match) => [match[1]!, match[2]!] as [string, string],
  );
  return { keys, values };
}

/** Every key, and every key with its string value, anywhere in a JSON value. */
export function fieldsOf(value: unknown): { keys: Set<string>; pairs: Set<string> } {
  const keys = new Set<string>();
  const pairs = new Set<string>();
  const walk = (item: unknown) => {
    if (Array.isArray(item)) item.forEach(walk);
    else if (item !== null && typeof item === 'object') {
      for (const [key, child] of Object.entries(item)) {
        keys.add(key);
        if (typeof child === 'string') pairs.add(`${key}=${child}`);
        walk(child);
      }
    }
  };
  walk(value);
  return { keys, pairs };
}

/** A link of a page: where it points and the line it is on. */
export interface MarkdownLink {
  href: string;
  line: number;
}

function lineOf(markdown: string, raw: string, from: number): { line: number; next: number } {
  const index = markdown.indexOf(raw, from);
  const at = index === -1 ? from : index;
  return { line: markdown.slice(0, at).split('\n').length, next: index === -1 ? from : index };
}

/** Every link of a Markdown text (inline and reference links; none inside code), in order. */
export function markdownLinks(markdown: string): MarkdownLink[] {
  const links: MarkdownLink[] = [];
  let from = 0;
  // walkTokens returns the callbacks' results; this one returns nothing to wait for.
  void marked.walkTokens(marked.lexer(markdown), (token) => {
    if (token.type !== 'link' && token.type !== 'image') return;
    const { line, next } = lineOf(markdown, token.raw, from);
    from = next;
    links.push({ href: (token as Token & { href: string }).href, line });
  });
  return links;
}

/** The text a reader sees in a heading: code spans' text, links' text, no HTML tags. */
function plainText(tokens: readonly Token[]): string {
  return tokens
    .map((token) => {
      if (token.type === 'html') return '';
      if ('tokens' in token && token.tokens !== undefined && token.tokens.length > 0) {
        return plainText(token.tokens);
      }
      return 'text' in token && typeof token.text === 'string' ? token.text : '';
    })
    .join('');
}

/**
 * GitHub's anchor for a heading (github-slugger's rule): lower case, every character that is not a
 * letter, mark, digit, connector (`_`), hyphen or space removed, each space a hyphen.
 */
export function githubSlug(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
    .replace(/ /g, '-');
}

export interface MarkdownHeading {
  depth: number;
  text: string;
  /** Its anchor; a repeated one gets `-1`, `-2`… as on GitHub. */
  slug: string;
}

/** The headings of a Markdown text, in order, with the anchors GitHub gives them. */
export function markdownHeadings(markdown: string): MarkdownHeading[] {
  const seen = new Map<string, number>();
  const headings: MarkdownHeading[] = [];
  for (const token of marked.lexer(markdown)) {
    if (token.type !== 'heading') continue;
    const text = plainText((token as Token & { tokens: Token[] }).tokens).trim();
    const base = githubSlug(text);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    headings.push({
      depth: (token as Token & { depth: number }).depth,
      text,
      slug: count === 0 ? base : `${base}-${count}`,
    });
  }
  return headings;
}

/**
 * The anchors of a Markdown text, by the text itself: a page links into the same few pages many
 * times, and lexing each target once per link was most of the links check's time.
 */
const anchorsByText = new Map<string, ReadonlySet<string>>();
function anchorsOf(markdown: string): ReadonlySet<string> {
  let anchors = anchorsByText.get(markdown);
  if (anchors === undefined) {
    anchors = new Set(markdownHeadings(markdown).map((heading) => heading.slug));
    anchorsByText.set(markdown, anchors);
  }
  return anchors;
}

/**
 * The links of `page` (a path relative to `root`) that land nowhere: a relative target that is not
 * a file of the repository, or an `#anchor` that is no heading of its Markdown target. Links with
 * a scheme (`https:`, `mailto:`) are not this repository's to check.
 */
export function brokenLinks(root: string, page: string): string[] {
  const read = (file: string) => readFileSync(path.join(root, file), 'utf8');
  const broken: string[] = [];
  for (const { href, line } of markdownLinks(read(page))) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(href)) continue;
    const [target = '', anchor] = href.split('#');
    const file =
      target === ''
        ? page
        : path.posix.normalize(path.posix.join(path.posix.dirname(page), target));
    if (file.startsWith('..') || !existsSync(path.join(root, file))) {
      broken.push(`${page}:${line} ${href}: no file ${file}`);
      continue;
    }
    if (anchor === undefined) continue;
    if (!file.endsWith('.md')) {
      broken.push(`${page}:${line} ${href}: an anchor into a file that is not Markdown`);
      continue;
    }
    if (!anchorsOf(read(file)).has(decodeURIComponent(anchor))) {
      broken.push(`${page}:${line} ${href}: ${file} has no heading #${anchor}`);
    }
  }
  return broken;
}
