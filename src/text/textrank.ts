// Extractive summarisation: ranks a text's sentences by TextRank and returns the central ones as summary and key points.
import { InvalidParameterError } from '../errors/app-error.js';
import { splitSentences } from './sentences.js';

/** Labels every result, so an extract is never mistaken for a summary a model wrote. */
export const extractiveMethod = 'extractive-textrank';

/** Sentences beyond this many (in text order) are not ranked; keeps the O(n²) graph small. */
export const maxSentencesConsidered = 500;
export const defaultMaxKeyPoints = 20;
const damping = 0.85;
const convergenceTolerance = 1e-10;
const maxIterations = 1000;
// Below this many words a "sentence" is a heading or a fragment: it shapes the graph but is not
// offered as a summary sentence or a key point (a heading shares words with everything).
const minWordsToSelect = 3;
// A candidate this similar to one already chosen repeats it (a pull quote, a restated lead).
const redundancyThreshold = 0.8;

export interface SummarizeOptions {
  /** How many sentences the summary has (at most the eligible ones). */
  sentences?: number;
  /** Or the share of the text's sentences, in (0, 1]. Default: a fifth, between 1 and 5. */
  ratio?: number;
  /** How many key points at most; default 20 — they are ranked, so take the first k. */
  keyPoints?: number;
}

export interface RankedSentence {
  text: string;
  /** Centrality relative to the most central sentence (1), rounded to 4 decimals. */
  score: number;
  /** The sentence's position among the text's sentences, from 0. */
  index: number;
}

export interface ExtractiveSummary {
  method: typeof extractiveMethod;
  /** The chosen sentences in text order, as one paragraph. */
  summary: string;
  /** The chosen sentences, in text order. */
  sentences: RankedSentence[];
  /** The most central sentences, most central first, without near-repeats. */
  keyPoints: string[];
  /** How many sentences the text has. */
  sentenceCount: number;
  /** True when only the first `maxSentencesConsidered` were ranked. */
  truncated: boolean;
}

export class SummarizationInputError extends InvalidParameterError {
  constructor(param: string, detail: string) {
    super(param, `${param}: ${detail}`);
    this.name = 'SummarizationInputError';
  }
}

/** Deterministic: the same text and options always give the same result. */
export function summarize(text: string, options: SummarizeOptions = {}): ExtractiveSummary {
  checkOptions(options);
  if (text.trim() === '')
    throw new SummarizationInputError('text', 'there is no text to summarise');
  const allSentences = splitSentences(text);
  const considered = allSentences.slice(0, maxSentencesConsidered);
  const tokens = considered.map(tokenize);
  const similarity = similarityMatrix(tokens);
  const scores = pageRank(similarity, considered.length);

  const wordCounts = considered.map((sentence) => sentence.split(' ').length);
  let eligible = considered
    .map((_, index) => index)
    .filter((index) => (wordCounts[index] ?? 0) >= minWordsToSelect);
  // A text of fragments only ("Yes. Done.") still gets a summary.
  if (eligible.length === 0) eligible = considered.map((_, index) => index);
  const ranked = [...eligible].sort((left, right) => compareScores(scores, left, right));

  const count = Math.min(summaryLength(options, considered.length), ranked.length);
  const chosen = pickDistinct(ranked, similarity, considered.length, count).sort(
    (left, right) => left - right,
  );
  const keyPointIndexes = pickDistinct(
    ranked,
    similarity,
    considered.length,
    options.keyPoints ?? defaultMaxKeyPoints,
  );

  const topScore = Math.max(...scores);
  const rankedSentence = (index: number): RankedSentence => ({
    text: considered[index] as string,
    score: Math.round(((scores[index] ?? 0) / topScore) * 1e4) / 1e4,
    index,
  });
  const sentences = chosen.map(rankedSentence);
  return {
    method: extractiveMethod,
    summary: joinSentences(sentences.map((sentence) => sentence.text)),
    sentences,
    keyPoints: keyPointIndexes.map((index) => considered[index] as string),
    sentenceCount: allSentences.length,
    truncated: allSentences.length > considered.length,
  };
}

function checkOptions(options: SummarizeOptions): void {
  const { sentences, ratio, keyPoints } = options;
  if (sentences !== undefined && ratio !== undefined) {
    throw new SummarizationInputError('sentences', "give 'sentences' or 'ratio', not both");
  }
  if (sentences !== undefined && !(Number.isInteger(sentences) && sentences >= 1)) {
    throw new SummarizationInputError(
      'sentences',
      `must be a whole number of at least 1, got ${sentences}`,
    );
  }
  if (ratio !== undefined && !(ratio > 0 && ratio <= 1)) {
    throw new SummarizationInputError('ratio', `must be more than 0 and at most 1, got ${ratio}`);
  }
  if (keyPoints !== undefined && !(Number.isInteger(keyPoints) && keyPoints >= 1)) {
    throw new SummarizationInputError(
      'keyPoints',
      `must be a whole number of at least 1, got ${keyPoints}`,
    );
  }
}

function summaryLength(options: SummarizeOptions, sentenceCount: number): number {
  if (options.sentences !== undefined) return options.sentences;
  if (options.ratio !== undefined) return Math.max(1, Math.round(options.ratio * sentenceCount));
  return Math.min(5, Math.max(1, Math.ceil(sentenceCount / 5)));
}

/** Higher score first; sentences whose scores tie (to rounding noise) in text order. */
function compareScores(scores: Float64Array, left: number, right: number): number {
  const difference = (scores[right] ?? 0) - (scores[left] ?? 0);
  return Math.abs(difference) > 1e-12 ? difference : left - right;
}

function pickDistinct(
  ranked: readonly number[],
  similarity: Float64Array,
  size: number,
  count: number,
): number[] {
  const picked: number[] = [];
  for (const candidate of ranked) {
    if (picked.length === count) break;
    const repeats = picked.some(
      (chosen) => (similarity[candidate * size + chosen] ?? 0) >= redundancyThreshold,
    );
    if (!repeats) picked.push(candidate);
  }
  return picked;
}

/** Sentences ending in CJK punctuation are written without a space between them. */
function joinSentences(sentences: readonly string[]): string {
  return sentences.reduce(
    (joined, sentence) =>
      joined === ''
        ? sentence
        : /[。！？｡]["'”’」』）]*$/u.test(joined)
          ? joined + sentence
          : `${joined} ${sentence}`,
    '',
  );
}

// ---------------------------------------------------------------------------------------------
// Terms

// A small list: enough to keep function words from making every sentence similar to every other;
// TF-IDF weighting below discounts whatever common words it misses.
const stopWords = new Set(
  (
    'a about above after again against all also am an and any are as at be because been before ' +
    'being below between both but by can could did do does doing down during each either few for ' +
    'from further had has have having he her here hers herself him himself his how however i if ' +
    'in into is it its itself just me more most my myself no nor not now of off on once only or ' +
    'other our ours ourselves out over own same she should so some such than that the their ' +
    'theirs them themselves then there these they this those through to too under until up upon ' +
    'very was we were what when where which while who whom why will with would yet you your ' +
    'yours yourself yourselves said says say one two also may might must shall us'
  ).split(' '),
);

const cjkRun = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]+/u;
const tokenPattern =
  /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]+|[\p{L}\p{N}]+(?:['’]\p{L}+)*/gu;

/**
 * A sentence's terms: lower-cased words without stop words, lightly stemmed; runs of Chinese or
 * Japanese characters, written without spaces, become overlapping character pairs instead.
 */
export function tokenize(sentence: string): string[] {
  const terms: string[] = [];
  for (const [match] of sentence.matchAll(tokenPattern)) {
    if (cjkRun.test(match)) {
      const characters = [...match];
      if (characters.length === 1) terms.push(match);
      for (let index = 0; index + 1 < characters.length; index += 1) {
        terms.push(`${characters[index]}${characters[index + 1]}`);
      }
      continue;
    }
    const word = match.toLowerCase().replace(/['’]s$/, '');
    if (stopWords.has(word)) continue;
    terms.push(stem(word));
  }
  return terms;
}

/**
 * Light suffix stripping (plurals, -ing, -ed, final -e) so that "battery/batteries" and
 * "store/stored/storing/storage" meet; a full Porter stemmer is more than ranking sentences needs,
 * and over-stemming joins unrelated words.
 */
export function stem(word: string): string {
  if (word.length <= 3 || /\d/.test(word)) return word;
  let stemmed = word;
  if (/ies$|ied$/.test(stemmed) && stemmed.length > 4) stemmed = `${stemmed.slice(0, -3)}y`;
  else if (stemmed.endsWith('sses')) stemmed = stemmed.slice(0, -2);
  else if (/[^su]s$/.test(stemmed) && !stemmed.endsWith('is')) stemmed = stemmed.slice(0, -1);
  const suffix = /ing$/.test(stemmed) ? 3 : /ed$/.test(stemmed) ? 2 : 0;
  if (suffix > 0 && stemmed.length - suffix >= 3) {
    stemmed = stemmed.slice(0, -suffix);
    // "stopped" → "stop", "running" → "run"; not "fall" or "miss", which double in the root.
    if (/([^aeioulsz])\1$/.test(stemmed)) stemmed = stemmed.slice(0, -1);
  }
  if (stemmed.endsWith('e') && stemmed.length >= 4) stemmed = stemmed.slice(0, -1);
  return stemmed;
}

// ---------------------------------------------------------------------------------------------
// Graph

/**
 * Cosine similarity of TF-IDF vectors (the measure of LexRank, Erkan & Radev 2004), as a dense
 * row-major n×n matrix with a zero diagonal. Chosen over TextRank's original word overlap divided
 * by log lengths because that favours long sentences (more words, more chances to overlap) and
 * is undefined for one-word sentences; cosine is length-normalised, symmetric (so the graph is
 * undirected, as PageRank over sentences assumes) and bounded in [0, 1], and IDF lets words that
 * occur in every sentence count for less than the stop list alone would. BM25 would need a
 * symmetrised variant for the same result.
 */
export function similarityMatrix(tokens: readonly string[][]): Float64Array {
  const size = tokens.length;
  const documentFrequency = new Map<string, number>();
  for (const terms of tokens) {
    for (const term of new Set(terms)) {
      documentFrequency.set(term, (documentFrequency.get(term) ?? 0) + 1);
    }
  }
  // Smoothed IDF (as scikit-learn's): never zero, so a term shared by all still links sentences.
  const idf = (term: string) => Math.log((1 + size) / (1 + (documentFrequency.get(term) ?? 0))) + 1;

  // An inverted index: only pairs of sentences sharing a term are ever multiplied.
  const postings = new Map<string, Array<{ sentence: number; weight: number }>>();
  const norms = new Float64Array(size);
  tokens.forEach((terms, sentence) => {
    const counts = new Map<string, number>();
    for (const term of terms) counts.set(term, (counts.get(term) ?? 0) + 1);
    let squares = 0;
    for (const [term, count] of counts) {
      const weight = count * idf(term);
      squares += weight * weight;
      let list = postings.get(term);
      if (list === undefined) {
        list = [];
        postings.set(term, list);
      }
      list.push({ sentence, weight });
    }
    norms[sentence] = Math.sqrt(squares);
  });

  const matrix = new Float64Array(size * size);
  for (const list of postings.values()) {
    for (let first = 0; first < list.length; first += 1) {
      const left = list[first] as { sentence: number; weight: number };
      for (let second = first + 1; second < list.length; second += 1) {
        const right = list[second] as { sentence: number; weight: number };
        const product = left.weight * right.weight;
        const forward = left.sentence * size + right.sentence;
        const backward = right.sentence * size + left.sentence;
        matrix[forward] = (matrix[forward] ?? 0) + product;
        matrix[backward] = (matrix[backward] ?? 0) + product;
      }
    }
  }
  for (let row = 0; row < size; row += 1) {
    for (let column = 0; column < size; column += 1) {
      const norm = (norms[row] ?? 0) * (norms[column] ?? 0);
      const at = row * size + column;
      matrix[at] = norm === 0 ? 0 : (matrix[at] ?? 0) / norm;
    }
  }
  return matrix;
}

/**
 * Weighted PageRank with damping 0.85, iterated until the scores move by less than 1e-10 in
 * total. A sentence sharing no term with any other spreads its score evenly (the usual treatment
 * of dangling nodes), so the scores stay a distribution summing to 1.
 */
export function pageRank(similarity: Float64Array, size: number): Float64Array {
  let scores = new Float64Array(size).fill(size === 0 ? 0 : 1 / size);
  if (size <= 1) return scores;
  const outWeight = new Float64Array(size);
  for (let row = 0; row < size; row += 1) {
    let total = 0;
    for (let column = 0; column < size; column += 1) total += similarity[row * size + column] ?? 0;
    outWeight[row] = total;
  }
  for (let iteration = 0; iteration < maxIterations; iteration += 1) {
    let danglingMass = 0;
    for (let row = 0; row < size; row += 1) {
      if (outWeight[row] === 0) danglingMass += scores[row] ?? 0;
    }
    const base = (1 - damping) / size + (damping * danglingMass) / size;
    const next = new Float64Array(size).fill(base);
    for (let source = 0; source < size; source += 1) {
      const total = outWeight[source] ?? 0;
      if (total === 0) continue;
      const share = (damping * (scores[source] ?? 0)) / total;
      const offset = source * size;
      for (let target = 0; target < size; target += 1) {
        next[target] = (next[target] ?? 0) + share * (similarity[offset + target] ?? 0);
      }
    }
    let change = 0;
    for (let index = 0; index < size; index += 1) {
      change += Math.abs((next[index] ?? 0) - (scores[index] ?? 0));
    }
    scores = next;
    if (change < convergenceTolerance) break;
  }
  return scores;
}
