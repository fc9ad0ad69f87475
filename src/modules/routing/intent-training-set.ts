// Reads the labelled messages the shipped intent classifier is trained on (for the trainer script
// and the test that checks the shipped model matches them); the service itself never reads them.
import { readFileSync } from 'node:fs';
import type { LabelledText } from './linear-classifier.js';
import { isIntentCategory } from './taxonomy.js';

export const trainingSetUrl = new URL('./intents/intent-training-set.tsv', import.meta.url);
export const shippedModelUrl = new URL('./intents/intent-model.json', import.meta.url);

/** `category<TAB>message` lines; `#` starts a comment line. */
export function parseLabelledTsv(text: string, source: string): LabelledText[] {
  const examples: LabelledText[] = [];
  text.split('\n').forEach((line, index) => {
    if (line.trim() === '' || line.startsWith('#')) return;
    const tab = line.indexOf('\t');
    if (tab <= 0) throw new Error(`${source}:${index + 1}: expected 'label<TAB>text'`);
    examples.push({ label: line.slice(0, tab), text: line.slice(tab + 1) });
  });
  return examples;
}

export function readIntentTrainingSet(): LabelledText[] {
  const examples = parseLabelledTsv(
    readFileSync(trainingSetUrl, 'utf8'),
    'intent-training-set.tsv',
  );
  for (const example of examples) {
    if (!isIntentCategory(example.label)) {
      throw new Error(`intent-training-set.tsv: '${example.label}' is not a taxonomy category`);
    }
  }
  return examples;
}
