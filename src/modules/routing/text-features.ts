// Lexical features of a message, shared by the intent classifier and the learned router: word
// unigrams and bigrams plus character n-grams of each word, hashed to 32-bit feature ids.

/** A sparse vector: parallel arrays of feature ids and weights. */
export interface SparseVector {
  readonly ids: Uint32Array;
  readonly weights: Float32Array;
}

export interface FeatureOptions {
  /** Character n-gram lengths taken inside each padded word (`<word>`). */
  readonly charGramMin: number;
  readonly charGramMax: number;
  /** Words longer than this contribute no character n-grams (URLs, hashes, pasted data). */
  readonly charGramMaxWordLength: number;
  /** At most this many words are read (a pasted document routes by its beginning). */
  readonly maxWords: number;
}

export const defaultFeatureOptions: FeatureOptions = {
  charGramMin: 3,
  charGramMax: 5,
  charGramMaxWordLength: 24,
  maxWords: 200,
};

/** Feature groups are hashed apart so a word and an identical n-gram do not collide. */
const enum Group {
  Word = 0x57,
  Bigram = 0x42,
  Char = 0x43,
}

const wordPattern = /[\p{L}\p{N}]+(?:['’][\p{L}]+)?/gu;

/** FNV-1a over UTF-16 code units, seeded with the feature group. */
function hash(group: Group, text: string): number {
  let value = seeded(group);
  for (let index = 0; index < text.length; index += 1) {
    value = Math.imul(value ^ text.charCodeAt(index), fnvPrime);
  }
  return value >>> 0;
}

/** Lower-cased, compatibility-normalised text (full-width letters, ligatures, curly quotes). */
export function normalizeText(text: string): string {
  return text.normalize('NFKC').toLowerCase().replace(/’/g, "'");
}

export function wordsOf(text: string, maxWords = defaultFeatureOptions.maxWords): string[] {
  const words: string[] = [];
  for (const match of normalizeText(text).matchAll(wordPattern)) {
    words.push(match[0]);
    if (words.length >= maxWords) break;
  }
  return words;
}

const fnvPrime = 0x01000193;

function seeded(group: Group): number {
  return Math.imul(0x811c9dc5 ^ group, fnvPrime);
}

/**
 * Calls `visit` with every feature occurrence of `text`: its id and whether it is a character
 * n-gram. N-grams are hashed in place (sizes from one start share their prefix's hash), so no
 * substring is allocated.
 */
function forEachFeature(
  text: string,
  withCharacters: boolean,
  options: FeatureOptions,
  visit: (id: number, isCharacter: boolean) => void,
): void {
  const words = wordsOf(text, options.maxWords);
  const charSeed = seeded(Group.Char);
  for (let index = 0; index < words.length; index += 1) {
    const word = words[index]!;
    visit(hash(Group.Word, word), false);
    if (index > 0) visit(hash(Group.Bigram, `${words[index - 1]!} ${word}`), false);
    if (!withCharacters || word.length > options.charGramMaxWordLength) continue;
    // The padded word `<word>`: position -1 is '<', position word.length is '>'.
    const paddedLength = word.length + 2;
    for (let start = 0; start + options.charGramMin <= paddedLength; start += 1) {
      let value = charSeed;
      for (let size = 1; size <= options.charGramMax && start + size <= paddedLength; size += 1) {
        const position = start + size - 2;
        const code = position < 0 ? 60 : position === word.length ? 62 : word.charCodeAt(position);
        value = Math.imul(value ^ code, fnvPrime);
        if (size >= options.charGramMin) visit(value >>> 0, true);
      }
    }
  }
}

/** The distinct features of `text` (for document frequencies). */
export function distinctFeatures(
  text: string,
  options: FeatureOptions = defaultFeatureOptions,
): Set<number> {
  const seen = new Set<number>();
  forEachFeature(text, true, options, (id) => seen.add(id));
  return seen;
}

let wordBuffer: Uint32Array = new Uint32Array(256);
let charBuffer: Uint32Array = new Uint32Array(2048);

/** Appends `id` to a buffer, growing it when full; returns the (possibly new) buffer. */
function pushTo(buffer: Uint32Array, length: number, id: number): Uint32Array {
  let target = buffer;
  if (length === buffer.length) {
    target = new Uint32Array(buffer.length * 2);
    target.set(buffer);
  }
  target[length] = id;
  return target;
}

/**
 * Gathers the feature ids of `text` into the shared word and character buffers (their first
 * `words` and `chars` entries), unsorted and with repeats.
 */
function gatherFeatures(
  text: string,
  withCharacters: boolean,
  options: FeatureOptions,
): { words: number; chars: number } {
  let words = 0;
  let chars = 0;
  forEachFeature(text, withCharacters, options, (id, isCharacter) => {
    if (isCharacter) {
      charBuffer = pushTo(charBuffer, chars, id);
      chars += 1;
    } else {
      wordBuffer = pushTo(wordBuffer, words, id);
      words += 1;
    }
  });
  return { words, chars };
}

/**
 * The TF-IDF vector of `text`: sublinear term frequency (1 + ln tf) times `idf(id)`, character
 * n-grams scaled by `charWeight` (a word yields many more of them than word features),
 * L2-normalised. Features whose idf is 0 are dropped. Occurrences are gathered in typed buffers
 * and counted after a sort, which is several times faster than a map per feature.
 */
export function tfidfVector(
  text: string,
  idf: (id: number) => number,
  charWeight: number,
  options: FeatureOptions = defaultFeatureOptions,
): SparseVector {
  const { words, chars } = gatherFeatures(text, charWeight !== 0, options);
  const ids: number[] = [];
  const weights: number[] = [];
  let norm = 0;
  const collect = (buffer: Uint32Array, scale: number) => {
    buffer.sort();
    let index = 0;
    while (index < buffer.length) {
      const id = buffer[index]!;
      let end = index + 1;
      while (end < buffer.length && buffer[end] === id) end += 1;
      const weight = (1 + Math.log(end - index)) * scale * idf(id);
      if (weight !== 0) {
        ids.push(id);
        weights.push(weight);
        norm += weight * weight;
      }
      index = end;
    }
  };
  collect(wordBuffer.subarray(0, words), 1);
  if (chars > 0) collect(charBuffer.subarray(0, chars), charWeight);
  norm = Math.sqrt(norm);
  const values = new Float32Array(weights.length);
  for (let index = 0; index < weights.length; index += 1) values[index] = weights[index]! / norm;
  return { ids: Uint32Array.from(ids), weights: values };
}

/** Distinct features of `text` with their sublinear frequencies (1 + ln tf), by group. */
export function groupedFrequencies(
  text: string,
  options: FeatureOptions = defaultFeatureOptions,
): { words: SparseVector; characters: SparseVector } {
  const { words, chars } = gatherFeatures(text, true, options);
  const collect = (buffer: Uint32Array): SparseVector => {
    buffer.sort();
    const ids: number[] = [];
    const weights: number[] = [];
    let index = 0;
    while (index < buffer.length) {
      const id = buffer[index]!;
      let end = index + 1;
      while (end < buffer.length && buffer[end] === id) end += 1;
      ids.push(id);
      weights.push(1 + Math.log(end - index));
      index = end;
    }
    return { ids: Uint32Array.from(ids), weights: Float32Array.from(weights) };
  };
  return {
    words: collect(wordBuffer.subarray(0, words)),
    characters: collect(charBuffer.subarray(0, chars)),
  };
}

/** Dot product of a sparse vector with a dense lookup. */
export function dotWith(vector: SparseVector, lookup: (id: number) => number): number {
  let sum = 0;
  for (let index = 0; index < vector.ids.length; index += 1) {
    sum += vector.weights[index]! * lookup(vector.ids[index]!);
  }
  return sum;
}
