// The learned router's in-memory index of one account's taught examples: TF-IDF vectors scored
// against each route's centroid (words, word pairs and character n-grams) and against the nearest
// taught examples (words and word pairs), updated one example at a time — online, no retraining.
import { Postings } from './postings.js';
import { groupedFrequencies, type SparseVector } from './text-features.js';

export interface RouterIndexOptions {
  /** Scale of character n-gram features against word features in the centroids. */
  readonly charWeight: number;
  /** Neighbours per route averaged into its nearest-neighbour score. */
  readonly neighbours: number;
  /** Weight of the nearest-neighbour score against the centroid score. */
  readonly neighbourWeight: number;
}

/** Chosen by cross-validation on the routing benchmark's training split (bench/routing.ts). */
export const defaultRouterIndexOptions: RouterIndexOptions = {
  charWeight: 0.5,
  neighbours: 3,
  neighbourWeight: 0.3,
};

export interface IndexedExample {
  /** Stable key of the message (its normalised digest): a newer example replaces an older one. */
  readonly key: string;
  readonly route: string;
  readonly text: string;
  /** Unit-length embedding of the text, when an embedding model made one. */
  readonly embedding?: Float32Array | null;
}

export interface RouteScore {
  readonly route: string;
  /** Combined score (neighbours and centroid), in [0, 1]. */
  readonly score: number;
  /** Similarity of the route's closest example (words and word pairs, or embeddings). */
  readonly nearest: number;
  /** That example's text, for the rationale. */
  readonly nearestText: string | null;
  readonly examples: number;
}

/** Gives the event loop a turn during long builds, so other requests are not held up. */
const breather = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Build work between breathers, in examples. */
const buildSlice = 400;

interface Document {
  readonly route: number;
  readonly key: string;
  readonly text: string;
  /**
   * Its features until it is indexed; dropped then (they are recomputed from the text in the
   * rare case of a replacement), which halves the index's memory.
   */
  features: { all: SparseVector; words: SparseVector } | null;
  readonly embedding: Float32Array | null;
  active: boolean;
}

export class RouterIndex {
  private documents: Document[] = [];
  private readonly byKey = new Map<string, number>();
  private readonly routeNames: string[] = [];
  private readonly routeSlots = new Map<string, number>();
  private routeCounts: number[] = [];
  /** Squared norm of each route's centroid (the sum of its examples' unit vectors). */
  private centroidSquares: number[] = [];
  /** Feature → (route, summed weight): the centroids, inverted. */
  private centroids = new Map<number, Postings>();
  /** Word feature → (document, weight): for nearest neighbours. */
  private postings = new Map<number, Postings>();
  private readonly documentFrequency = new Map<number, number>();
  /** IDF frozen at the last build, so that every stored weight uses the same statistics. */
  private idf = new Map<number, number>();
  private idfDocuments = 0;
  private activeCount = 0;
  private storedWeights = 0;
  private documentScores = new Float32Array(16);
  private touched = new Int32Array(16);
  private indexed = false;

  private constructor(readonly options: RouterIndexOptions) {}

  /**
   * An index of `examples` (later ones replace earlier ones with the same key), built in slices
   * with a turn of the event loop between them.
   */
  static async build(
    examples: Iterable<IndexedExample>,
    options: RouterIndexOptions = defaultRouterIndexOptions,
  ): Promise<RouterIndex> {
    const index = new RouterIndex(options);
    let sinceBreath = 0;
    for (const example of examples) {
      index.append(example);
      sinceBreath += 1;
      if (sinceBreath >= buildSlice) {
        sinceBreath = 0;
        await breather();
      }
    }
    await index.reindex();
    return index;
  }

  get size(): number {
    return this.activeCount;
  }

  /** Approximate bytes held, for the cache's size bound. */
  get approximateBytes(): number {
    let bytes = this.storedWeights * 8 + (this.postings.size + this.centroids.size) * 80;
    bytes += this.documentFrequency.size * 50 + this.idf.size * 50;
    for (const document of this.documents) {
      bytes += 120 + document.text.length * 2;
      if (document.embedding !== null) bytes += document.embedding.byteLength;
    }
    return bytes;
  }

  /**
   * Whether the examples grew by a fifth since the IDF statistics were taken: the owner then
   * builds a fresh index in the background (adding stays correct meanwhile, with older IDF).
   */
  get stale(): boolean {
    return this.activeCount >= this.idfDocuments + Math.max(8, Math.floor(this.idfDocuments / 5));
  }

  /** Routes that have at least one example, with their example counts. */
  routes(): Map<string, number> {
    const routes = new Map<string, number>();
    this.routeNames.forEach((name, slot) => {
      if ((this.routeCounts[slot] ?? 0) > 0) routes.set(name, this.routeCounts[slot]!);
    });
    return routes;
  }

  /** Adds (or replaces, by key) one example: its route's centroid and the postings change at once. */
  add(example: IndexedExample): void {
    const position = this.append(example);
    this.indexDocument(position);
  }

  /** Scores every route with examples against `text` (and its embedding), best first. */
  score(text: string, queryEmbedding: Float32Array | null = null): RouteScore[] {
    if (this.activeCount === 0) return [];
    const routeCount = this.routeNames.length;
    const centroidDots = new Float64Array(routeCount);
    const frequencies = this.frequenciesOf(text);
    const full = this.weigh(frequencies.all);
    for (let index = 0; index < full.ids.length; index += 1) {
      const list = this.centroids.get(full.ids[index]!);
      if (list === undefined) continue;
      const weight = full.weights[index]!;
      for (let entry = 0; entry < list.length; entry += 1) {
        centroidDots[list.slots[entry]!]! += weight * list.weights[entry]!;
      }
    }

    // Nearest neighbours: accumulate over the documents sharing a word feature with the query.
    const words = this.weigh(frequencies.words);
    const scores = this.documentScores;
    let touchedCount = 0;
    for (let index = 0; index < words.ids.length; index += 1) {
      const list = this.postings.get(words.ids[index]!);
      if (list === undefined) continue;
      const weight = words.weights[index]!;
      const { slots, weights, length } = list;
      for (let entry = 0; entry < length; entry += 1) {
        const document = slots[entry]!;
        if (scores[document] === 0) this.touched[touchedCount++] = document;
        scores[document]! += weight * weights[entry]!;
      }
    }
    if (queryEmbedding !== null) {
      touchedCount = this.blendEmbeddings(queryEmbedding, touchedCount);
    }
    const neighbours = this.options.neighbours;
    const best = new Float64Array(routeCount * neighbours);
    const nearestDocument = new Int32Array(routeCount).fill(-1);
    for (let index = 0; index < touchedCount; index += 1) {
      const position = this.touched[index]!;
      const similarity = Math.min(1, scores[position]!);
      scores[position] = 0;
      const document = this.documents[position]!;
      if (!document.active) continue;
      const offset = document.route * neighbours;
      if (similarity <= best[offset + neighbours - 1]!) continue;
      let slot = neighbours - 1;
      while (slot > 0 && best[offset + slot - 1]! < similarity) {
        best[offset + slot] = best[offset + slot - 1]!;
        slot -= 1;
      }
      best[offset + slot] = similarity;
      if (slot === 0) nearestDocument[document.route] = position;
    }

    const results: RouteScore[] = [];
    for (let route = 0; route < routeCount; route += 1) {
      const count = this.routeCounts[route]!;
      if (count === 0) continue;
      let neighbourSum = 0;
      for (let slot = 0; slot < neighbours; slot += 1)
        neighbourSum += best[route * neighbours + slot]!;
      const neighbourScore = neighbourSum / Math.min(neighbours, count);
      const centroidScore =
        centroidDots[route]! / Math.sqrt(Math.max(this.centroidSquares[route]!, 1e-12));
      const score =
        this.options.neighbourWeight * neighbourScore +
        (1 - this.options.neighbourWeight) * Math.max(0, centroidScore);
      if (score <= 0) continue;
      const nearest = nearestDocument[route]!;
      results.push({
        route: this.routeNames[route]!,
        score: Math.min(1, score),
        nearest: best[route * neighbours]!,
        nearestText: nearest < 0 ? null : this.documents[nearest]!.text,
        examples: count,
      });
    }
    return results.sort((a, b) => b.score - a.score || a.route.localeCompare(b.route));
  }

  /** Records the example and its frequencies; indexing is the caller's business. */
  private append(example: IndexedExample): number {
    const previous = this.byKey.get(example.key);
    if (previous !== undefined) this.deactivate(previous);
    let route = this.routeSlots.get(example.route);
    if (route === undefined) {
      route = this.routeNames.length;
      this.routeNames.push(example.route);
      this.routeSlots.set(example.route, route);
      this.routeCounts.push(0);
      this.centroidSquares.push(0);
    }
    const features = this.frequenciesOf(example.text);
    for (const id of features.all.ids) {
      this.documentFrequency.set(id, (this.documentFrequency.get(id) ?? 0) + 1);
    }
    const position = this.documents.length;
    this.documents.push({
      route,
      key: example.key,
      text: example.text,
      features,
      embedding: example.embedding ?? null,
      active: true,
    });
    this.byKey.set(example.key, position);
    this.activeCount += 1;
    this.routeCounts[route]! += 1;
    return position;
  }

  /**
   * The distinct features of `text` with their sublinear frequencies: all of them (character
   * n-grams scaled by `charWeight`), and words and word pairs alone.
   */
  private frequenciesOf(text: string): { all: SparseVector; words: SparseVector } {
    const { words, characters } = groupedFrequencies(text);
    const ids = new Uint32Array(words.ids.length + characters.ids.length);
    ids.set(words.ids);
    ids.set(characters.ids, words.ids.length);
    const weights = new Float32Array(ids.length);
    weights.set(words.weights);
    const charWeight = this.options.charWeight;
    for (let index = 0; index < characters.ids.length; index += 1) {
      weights[words.ids.length + index] = characters.weights[index]! * charWeight;
    }
    return { all: { ids, weights }, words };
  }

  private idfOf(id: number): number {
    const frequency = this.idf.get(id) ?? 0;
    return Math.log((1 + this.idfDocuments) / (1 + frequency)) + 1;
  }

  /** Frequencies × frozen IDF, L2-normalised. */
  private weigh(frequencies: SparseVector): SparseVector {
    const weights = new Float32Array(frequencies.ids.length);
    let norm = 0;
    for (let index = 0; index < frequencies.ids.length; index += 1) {
      const weight = frequencies.weights[index]! * this.idfOf(frequencies.ids[index]!);
      weights[index] = weight;
      norm += weight * weight;
    }
    norm = Math.sqrt(norm) || 1;
    for (let index = 0; index < weights.length; index += 1) weights[index]! /= norm;
    return { ids: frequencies.ids, weights };
  }

  private indexDocument(position: number, sign: 1 | -1 = 1): void {
    const document = this.documents[position]!;
    const features = document.features ?? this.frequenciesOf(document.text);
    document.features = null;
    const vector = this.weigh(features.all);
    let square = this.centroidSquares[document.route]!;
    for (let index = 0; index < vector.ids.length; index += 1) {
      const id = vector.ids[index]!;
      let list = this.centroids.get(id);
      if (list === undefined) {
        list = new Postings();
        this.centroids.set(id, list);
        this.storedWeights += 1;
      }
      const delta = sign * vector.weights[index]!;
      const before = list.addTo(document.route, delta);
      if (before === 0) this.storedWeights += 1;
      square += (before + delta) ** 2 - before ** 2;
    }
    this.centroidSquares[document.route] = Math.max(0, square);
    if (sign < 0) return;
    const words = this.weigh(features.words);
    for (let index = 0; index < words.ids.length; index += 1) {
      const id = words.ids[index]!;
      let list = this.postings.get(id);
      if (list === undefined) {
        list = new Postings();
        this.postings.set(id, list);
      }
      list.push(position, words.weights[index]!);
      this.storedWeights += 1;
    }
    if (this.documentScores.length < this.documents.length) {
      this.documentScores = new Float32Array(this.documents.length * 2);
      this.touched = new Int32Array(this.documents.length * 2);
    }
  }

  /**
   * With an embedding, an example's similarity is the mean of its word similarity and its
   * embedding cosine; every example with an embedding of the query's length takes part.
   */
  private blendEmbeddings(query: Float32Array, touchedCount: number): number {
    const scores = this.documentScores;
    let count = touchedCount;
    for (let position = 0; position < this.documents.length; position += 1) {
      const document = this.documents[position]!;
      const embedding = document.embedding;
      if (!document.active || embedding === null || embedding.length !== query.length) continue;
      let dot = 0;
      for (let index = 0; index < query.length; index += 1)
        dot += query[index]! * embedding[index]!;
      const lexical = scores[position]!;
      if (lexical === 0) {
        if (dot <= 0) continue;
        this.touched[count++] = position;
      }
      scores[position] = (lexical + Math.max(0, dot)) / 2 || Number.MIN_VALUE;
    }
    return count;
  }

  private deactivate(position: number): void {
    const document = this.documents[position]!;
    if (!document.active) return;
    const { all } = document.features ?? this.frequenciesOf(document.text);
    if (this.indexed) this.indexDocument(position, -1);
    document.active = false;
    this.activeCount -= 1;
    this.routeCounts[document.route]! -= 1;
    for (const id of all.ids) {
      const frequency = (this.documentFrequency.get(id) ?? 1) - 1;
      if (frequency <= 0) this.documentFrequency.delete(id);
      else this.documentFrequency.set(id, frequency);
    }
    this.byKey.delete(document.key);
  }

  /** Takes IDF statistics from the active examples and indexes them all with it. */
  private async reindex(): Promise<void> {
    this.documents = this.documents.filter((document) => document.active);
    this.byKey.clear();
    this.documents.forEach((document, position) => this.byKey.set(document.key, position));
    this.idf = new Map(this.documentFrequency);
    this.idfDocuments = this.activeCount;
    this.centroids = new Map();
    this.postings = new Map();
    this.storedWeights = 0;
    this.centroidSquares = this.routeNames.map(() => 0);
    for (let position = 0; position < this.documents.length; position += 1) {
      if (position > 0 && position % buildSlice === 0) await breather();
      this.indexDocument(position);
    }
    this.indexed = true;
  }
}
