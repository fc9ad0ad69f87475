// Entities in a message: e-mail addresses and URLs (linkify-it), dates and times (chrono-node),
// money and numbers (patterns), and named people, places, organisations and other proper nouns
// (compromise's tagger). Overlaps are resolved in that order of precedence.
import { createRequire } from 'node:module';
import type * as Chrono from 'chrono-node';
import type Compromise from 'compromise';
import type * as Linkify from 'linkify-it';

export type EntityType =
  | 'email'
  | 'url'
  | 'money'
  | 'date'
  | 'person'
  | 'place'
  | 'organization'
  | 'name'
  | 'number';

export interface Entity {
  readonly type: EntityType;
  /** The text as it appears in the message. */
  readonly text: string;
  /** A normalised value: ISO 8601 for dates, a number for numbers and money, the address, … */
  readonly value: string | number;
  /** Offsets in the message (UTF-16 code units, end exclusive). */
  readonly start: number;
  readonly end: number;
}

/** The tagger costs ~1 ms per 100 words: only the start of a long message is read for names. */
const maxTaggedCharacters = 2000;
/** Dates and patterns are cheaper; they read further. */
const maxScannedCharacters = 20_000;
const maxEntities = 50;

/*
 * The three libraries hold about 40 MiB once loaded; an instance that never classifies a message
 * should not carry them. They are required (their CommonJS builds, synchronously) on first use.
 */
const require = createRequire(import.meta.url);
let libraries:
  | { chrono: typeof Chrono; nlp: typeof Compromise; linkify: Linkify.LinkifyIt }
  | undefined;

let prepared = false;

/**
 * Loads the libraries and runs the tagger once on a sentence of every kind, so that a first
 * message does not pay for it (about a second: compromise builds its lexicon on first use). The
 * text threads call it before a task's deadline starts: the cost is the thread's, once, whatever
 * the message.
 */
export function prepareEntityDetection(): void {
  if (prepared) return;
  detectEntities(
    'Ada Lovelace wrote to ada@example.com from London on 5 June 1843 about $20.',
    new Date(0),
  );
  prepared = true;
}

function entityLibraries(): NonNullable<typeof libraries> {
  if (libraries === undefined) {
    const { LinkifyIt } = require('linkify-it') as typeof Linkify;
    libraries = {
      chrono: require('chrono-node') as typeof Chrono,
      nlp: require('compromise') as typeof Compromise,
      linkify: new LinkifyIt(),
    };
  }
  return libraries;
}

const currencySymbols: Record<string, string> = {
  $: 'USD',
  '€': 'EUR',
  '£': 'GBP',
  '¥': 'JPY',
  '₹': 'INR',
  '₩': 'KRW',
  '₽': 'RUB',
  '₺': 'TRY',
  '₿': 'BTC',
};
const currencyWords: Record<string, string> = {
  dollar: 'USD',
  dollars: 'USD',
  usd: 'USD',
  euro: 'EUR',
  euros: 'EUR',
  eur: 'EUR',
  pound: 'GBP',
  pounds: 'GBP',
  gbp: 'GBP',
  yen: 'JPY',
  jpy: 'JPY',
  franc: 'CHF',
  francs: 'CHF',
  chf: 'CHF',
  rupee: 'INR',
  rupees: 'INR',
  inr: 'INR',
  cad: 'CAD',
  aud: 'AUD',
  bitcoin: 'BTC',
  btc: 'BTC',
};
const amount = String.raw`\d{1,3}(?:[,\s]\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?`;
const scale = String.raw`(?:\s?(?:k|m|bn|thousand|million|billion)\b)?`;
const moneyPattern = new RegExp(
  String.raw`(?<symbol>[$€£¥₹₩₽₺₿])\s?(?<amount1>${amount})${scale}|(?<amount2>${amount})${scale}\s?(?<word>${Object.keys(currencyWords).join('|')})\b|\b(?<code>usd|eur|gbp|chf|cad|aud|jpy|inr)\s?(?<amount3>${amount})${scale}`,
  'giu',
);
const numberPattern =
  /(?<![\p{L}\d.,])[-+]?\d{1,3}(?:,\d{3})+(?:\.\d+)?%?|(?<![\p{L}\d.,])[-+]?\d+(?:\.\d+)?%?/gu;

function parseAmount(text: string): number {
  return Number(text.replace(/[,\s]/g, ''));
}

/** Trims punctuation the tagger keeps at the end of a term ("Paris," → "Paris"). */
function trimmed(message: string, start: number, end: number): { start: number; end: number } {
  let last = end;
  while (last > start && /[\s.,;:!?'")\]]/.test(message[last - 1]!)) last -= 1;
  let first = start;
  while (first < last && /[\s'"([]/.test(message[first]!)) first += 1;
  return { start: first, end: last };
}

function tagged(message: string): Entity[] {
  const text = message.slice(0, maxTaggedCharacters);
  const document = entityLibraries().nlp(text);
  const found: Entity[] = [];
  const collect = (type: EntityType, view: { json(options: object): unknown }) => {
    const matches = view.json({ offset: true }) as { offset?: { start: number; length: number } }[];
    for (const match of matches) {
      if (match.offset === undefined) continue;
      const span = trimmed(text, match.offset.start, match.offset.start + match.offset.length);
      const value = text.slice(span.start, span.end);
      if (value.length < 2) continue;
      found.push({ type, text: value, value, start: span.start, end: span.end });
    }
  };
  collect('person', document.people());
  collect('place', document.places());
  collect('organization', document.organizations());
  collect('name', document.match('#ProperNoun+'));
  return found;
}

/**
 * Every entity of `message`, in reading order, without overlaps; `now` anchors relative dates.
 * `names: false` skips the tagger (people, places, organisations), the one costly step.
 */
export function detectEntities(
  message: string,
  now: Date,
  options: { names: boolean } = { names: true },
): Entity[] {
  const text = message.slice(0, maxScannedCharacters);
  const { chrono, linkify } = entityLibraries();
  const candidates: Entity[] = [];
  for (const match of linkify.match(text) ?? []) {
    const email = match.schema === 'mailto:';
    candidates.push({
      type: email ? 'email' : 'url',
      text: match.raw,
      value: email ? match.raw : match.url,
      start: match.index,
      end: match.lastIndex,
    });
  }
  for (const match of text.matchAll(moneyPattern)) {
    const groups = match.groups ?? {};
    const number = groups.amount1 ?? groups.amount2 ?? groups.amount3 ?? '0';
    const currency =
      groups.symbol !== undefined
        ? currencySymbols[groups.symbol]
        : groups.word !== undefined
          ? currencyWords[groups.word.toLowerCase()]
          : groups.code?.toUpperCase();
    const span = trimmed(text, match.index, match.index + match[0].length);
    candidates.push({
      type: 'money',
      text: text.slice(span.start, span.end),
      value: `${parseAmount(number)} ${currency ?? ''}`.trim(),
      start: span.start,
      end: span.end,
    });
  }
  for (const result of chrono.parse(text, now)) {
    candidates.push({
      type: 'date',
      text: result.text,
      value: result.start.date().toISOString(),
      start: result.index,
      end: result.index + result.text.length,
    });
  }
  if (options.names) candidates.push(...tagged(text));
  for (const match of text.matchAll(numberPattern)) {
    const raw = match[0];
    const value = parseAmount(raw.replace(/%$/, ''));
    if (!Number.isFinite(value)) continue;
    candidates.push({
      type: 'number',
      text: raw,
      value: raw.endsWith('%') ? value / 100 : value,
      start: match.index,
      end: match.index + raw.length,
    });
  }

  // Earlier candidates win (their order is the precedence); a later one overlapping them is dropped.
  const kept: Entity[] = [];
  for (const candidate of candidates) {
    if (kept.length >= maxEntities) break;
    const overlaps = kept.some(
      (entity) => candidate.start < entity.end && entity.start < candidate.end,
    );
    if (!overlaps) kept.push(candidate);
  }
  return kept.sort((a, b) => a.start - b.start);
}
