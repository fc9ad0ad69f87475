// Trains the shipped intent classifier on src/modules/routing/intents/intent-training-set.tsv and
// writes src/modules/routing/intents/intent-model.json. `--evaluate` prints 5-fold cross-validated
// accuracy instead.
import { writeFileSync } from 'node:fs';
import {
  LinearClassifier,
  datasetDigest,
  defaultTrainingOptions,
  type LabelledText,
} from '../src/modules/routing/linear-classifier.js';
import {
  readIntentTrainingSet,
  shippedModelUrl,
} from '../src/modules/routing/intent-training-set.js';

const examples = readIntentTrainingSet();

function crossValidate(
  data: readonly LabelledText[],
  folds: number,
  options = defaultTrainingOptions,
) {
  let correct = 0;
  for (let fold = 0; fold < folds; fold += 1) {
    const train = data.filter((_, index) => index % folds !== fold);
    const test = data.filter((_, index) => index % folds === fold);
    const model = LinearClassifier.train(train, options);
    for (const example of test)
      if (model.predict(example.text).label === example.label) correct += 1;
  }
  return correct / data.length;
}

if (process.argv.includes('--evaluate')) {
  for (const charWeight of [0, 0.3, 0.5]) {
    for (const l2 of [1e-6, 1e-4]) {
      const options = { ...defaultTrainingOptions, charWeight, l2 };
      console.log(
        `charWeight ${charWeight} l2 ${l2}: ${(crossValidate(examples, 5, options) * 100).toFixed(1)}%`,
      );
    }
  }
} else {
  const started = performance.now();
  const model = LinearClassifier.train(examples);
  const serialized = model.serialize(datasetDigest(examples));
  writeFileSync(shippedModelUrl, `${JSON.stringify(serialized, null, 2)}\n`);
  console.log(
    `trained on ${examples.length} examples, ${model.featureCount} features, in ${Math.round(performance.now() - started)} ms → ${shippedModelUrl.pathname}`,
  );
}
