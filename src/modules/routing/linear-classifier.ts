// Multinomial logistic regression over TF-IDF features: trained offline (deterministically) for
// the shipped intent classifier, and as the offline baseline the routing benchmark compares with.
import { createHash } from 'node:crypto';
import { distinctFeatures, tfidfVector, type SparseVector } from './text-features.js';

export interface LabelledText {
  readonly text: string;
  readonly label: string;
}

export interface TrainingOptions {
  readonly epochs: number;
  /** AdaGrad's base learning rate. */
  readonly learningRate: number;
  /** L2 penalty per update on the touched weights. */
  readonly l2: number;
  readonly charWeight: number;
  /** Features seen in fewer training texts are dropped. */
  readonly minDocumentFrequency: number;
  readonly seed: number;
}

/** Chosen by 5-fold cross-validation on the shipped intent set (`npm run train:intents -- --evaluate`). */
export const defaultTrainingOptions: TrainingOptions = {
  epochs: 30,
  learningRate: 0.2,
  l2: 1e-6,
  charWeight: 0.3,
  minDocumentFrequency: 1,
  seed: 7,
};

export interface Prediction {
  readonly label: string;
  readonly probability: number;
  /** Every label with its probability, most probable first. */
  readonly ranked: readonly { label: string; probability: number }[];
}

/** Deterministic pseudo-random numbers (mulberry32), so training gives the same model each run. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function softmaxInPlace(scores: Float64Array): void {
  let max = -Infinity;
  for (const score of scores) max = Math.max(max, score);
  let sum = 0;
  for (let index = 0; index < scores.length; index += 1) {
    scores[index] = Math.exp(scores[index]! - max);
    sum += scores[index]!;
  }
  for (let index = 0; index < scores.length; index += 1) scores[index]! /= sum;
}

export class LinearClassifier {
  private readonly labelIndex: Map<string, number>;

  constructor(
    readonly labels: readonly string[],
    readonly charWeight: number,
    /** Feature id → idf. */
    private readonly idf: ReadonlyMap<number, number>,
    /** Feature id → one weight per label. */
    private readonly weights: ReadonlyMap<number, Float32Array>,
    private readonly biases: Float32Array,
  ) {
    this.labelIndex = new Map(labels.map((label, index) => [label, index]));
  }

  get featureCount(): number {
    return this.weights.size;
  }

  vectorOf(text: string): SparseVector {
    return tfidfVector(text, (id) => this.idf.get(id) ?? 0, this.charWeight);
  }

  predict(text: string): Prediction {
    const scores = this.scores(this.vectorOf(text));
    softmaxInPlace(scores);
    const ranked = this.labels
      .map((label, index) => ({ label, probability: scores[index]! }))
      .sort((a, b) => b.probability - a.probability || a.label.localeCompare(b.label));
    return { label: ranked[0]!.label, probability: ranked[0]!.probability, ranked };
  }

  private scores(vector: SparseVector): Float64Array {
    const scores = Float64Array.from(this.biases);
    for (let position = 0; position < vector.ids.length; position += 1) {
      const row = this.weights.get(vector.ids[position]!);
      if (row === undefined) continue;
      const value = vector.weights[position]!;
      for (let label = 0; label < row.length; label += 1) scores[label]! += value * row[label]!;
    }
    return scores;
  }

  /** Trains on `examples` with AdaGrad SGD over a seeded shuffle: the same data gives the same model. */
  static train(
    examples: readonly LabelledText[],
    options: TrainingOptions = defaultTrainingOptions,
  ): LinearClassifier {
    const labels = [...new Set(examples.map((example) => example.label))].sort();
    const labelIndex = new Map(labels.map((label, index) => [label, index]));
    const documentFrequency = new Map<number, number>();
    for (const example of examples) {
      for (const id of distinctFeatures(example.text)) {
        documentFrequency.set(id, (documentFrequency.get(id) ?? 0) + 1);
      }
    }
    const idf = new Map<number, number>();
    for (const [id, frequency] of documentFrequency) {
      if (frequency < options.minDocumentFrequency) continue;
      idf.set(id, Math.log((1 + examples.length) / (1 + frequency)) + 1);
    }
    const vectors = examples.map((example) =>
      tfidfVector(example.text, (id) => idf.get(id) ?? 0, options.charWeight),
    );
    const targets = examples.map((example) => labelIndex.get(example.label)!);

    const count = labels.length;
    const weights = new Map<number, Float32Array>();
    const squaredGradients = new Map<number, Float32Array>();
    for (const id of idf.keys()) {
      weights.set(id, new Float32Array(count));
      squaredGradients.set(id, new Float32Array(count));
    }
    const biases = new Float32Array(count);
    const biasGradients = new Float32Array(count);
    const next = random(options.seed);
    const order = examples.map((_, index) => index);
    const epsilon = 1e-8;
    const model = new LinearClassifier(labels, options.charWeight, idf, weights, biases);

    for (let epoch = 0; epoch < options.epochs; epoch += 1) {
      for (let index = order.length - 1; index > 0; index -= 1) {
        const other = Math.floor(next() * (index + 1));
        [order[index], order[other]] = [order[other]!, order[index]!];
      }
      for (const exampleIndex of order) {
        const vector = vectors[exampleIndex]!;
        const probabilities = model.scores(vector);
        softmaxInPlace(probabilities);
        const target = targets[exampleIndex]!;
        for (let label = 0; label < count; label += 1) {
          const error = probabilities[label]! - (label === target ? 1 : 0);
          biasGradients[label]! += error * error;
          biases[label]! -=
            (options.learningRate * error) / Math.sqrt(biasGradients[label]! + epsilon);
        }
        for (let position = 0; position < vector.ids.length; position += 1) {
          const id = vector.ids[position]!;
          const row = weights.get(id);
          const squares = squaredGradients.get(id);
          if (row === undefined || squares === undefined) continue;
          const value = vector.weights[position]!;
          for (let label = 0; label < count; label += 1) {
            const gradient =
              (probabilities[label]! - (label === target ? 1 : 0)) * value +
              options.l2 * row[label]!;
            squares[label]! += gradient * gradient;
            row[label]! -= (options.learningRate * gradient) / Math.sqrt(squares[label]! + epsilon);
          }
        }
      }
    }
    return model;
  }

  /**
   * A compact, JSON-safe form: feature ids, idf and weights as base64 (weights quantised to int8
   * with one scale), which keeps the shipped model small. `datasetDigest` ties it to its data.
   */
  serialize(datasetDigest: string): SerializedClassifier {
    const ids = [...this.weights.keys()].sort((a, b) => a - b);
    let maxAbs = 0;
    for (const row of this.weights.values())
      for (const value of row) maxAbs = Math.max(maxAbs, Math.abs(value));
    for (const value of this.biases) maxAbs = Math.max(maxAbs, Math.abs(value));
    const scale = maxAbs === 0 ? 1 : maxAbs / 127;
    const quantised = new Int8Array(ids.length * this.labels.length);
    ids.forEach((id, row) => {
      const weights = this.weights.get(id)!;
      for (let label = 0; label < this.labels.length; label += 1) {
        quantised[row * this.labels.length + label] = Math.round(weights[label]! / scale);
      }
    });
    const idf = Float32Array.from(ids.map((id) => this.idf.get(id) ?? 0));
    return {
      format: 'linear-tfidf-v1',
      dataset_digest: datasetDigest,
      labels: [...this.labels],
      char_weight: this.charWeight,
      scale,
      biases: [...this.biases].map((value) => Math.round(value / scale)),
      features: Buffer.from(Uint32Array.from(ids).buffer).toString('base64'),
      idf: Buffer.from(idf.buffer).toString('base64'),
      weights: Buffer.from(quantised.buffer).toString('base64'),
    };
  }

  static deserialize(serialized: SerializedClassifier): LinearClassifier {
    // Copies into fresh buffers: a decoded Buffer may sit at an unaligned offset of a shared pool.
    const ids = new Uint32Array(new Uint8Array(Buffer.from(serialized.features, 'base64')).buffer);
    const idfValues = new Float32Array(
      new Uint8Array(Buffer.from(serialized.idf, 'base64')).buffer,
    );
    const quantised = new Int8Array(
      new Uint8Array(Buffer.from(serialized.weights, 'base64')).buffer,
    );
    const count = serialized.labels.length;
    const idf = new Map<number, number>();
    const weights = new Map<number, Float32Array>();
    ids.forEach((id, row) => {
      idf.set(id, idfValues[row]!);
      const values = new Float32Array(count);
      for (let label = 0; label < count; label += 1) {
        values[label] = quantised[row * count + label]! * serialized.scale;
      }
      weights.set(id, values);
    });
    return new LinearClassifier(
      serialized.labels,
      serialized.char_weight,
      idf,
      weights,
      Float32Array.from(serialized.biases.map((value) => value * serialized.scale)),
    );
  }
}

export interface SerializedClassifier {
  format: 'linear-tfidf-v1';
  dataset_digest: string;
  labels: string[];
  char_weight: number;
  scale: number;
  biases: number[];
  features: string;
  idf: string;
  weights: string;
}

/** SHA-256 of the labelled examples, in order: what a shipped model was trained on. */
export function datasetDigest(examples: readonly LabelledText[]): string {
  const hash = createHash('sha256');
  for (const example of examples) hash.update(`${example.label}\t${example.text}\n`);
  return hash.digest('hex');
}
