// The shipped intent model is the one its labelled set trains: same data digest, same answers.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { LinearClassifier, datasetDigest, type SerializedClassifier } from './linear-classifier.js';
import { readIntentTrainingSet, shippedModelUrl } from './intent-training-set.js';
import { intentCategories } from './taxonomy.js';

describe('shipped intent classifier', () => {
  const examples = readIntentTrainingSet();
  const shipped = JSON.parse(readFileSync(shippedModelUrl, 'utf8')) as SerializedClassifier;

  it('was trained on the current labelled set (retrain with npm run train:intents)', () => {
    expect(shipped.dataset_digest).toBe(datasetDigest(examples));
    expect([...shipped.labels].sort()).toEqual([...intentCategories].sort());
    expect(examples.length).toBeGreaterThanOrEqual(300);
  });

  it('is reproduced by training again, and fits its training set', () => {
    const model = LinearClassifier.deserialize(shipped);
    const retrained = LinearClassifier.train(examples);
    let agree = 0;
    let correct = 0;
    for (const example of examples) {
      const label = model.predict(example.text).label;
      if (label === retrained.predict(example.text).label) agree += 1;
      if (label === example.label) correct += 1;
    }
    expect(agree / examples.length).toBeGreaterThan(0.99);
    expect(correct / examples.length).toBeGreaterThan(0.95);
  });
});
