// Classifies a message into the taxonomy: the shipped linear classifier always (no model needed),
// or a chat model asked for a structured answer when one is named, with the classifier's
// candidates as hints.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { JSONSchema7 } from '@ai-sdk/provider';
import { AgentModels } from '../../models/agent-models.js';
import type { ModelRegistry } from '../../models/model-registry.js';
import { bundleDirectory, packageRoot } from '../../runtime-paths.js';
import { LinearClassifier, type SerializedClassifier } from './linear-classifier.js';
import { intentCategories, isIntentCategory, taxonomy, type IntentCategory } from './taxonomy.js';

export interface Classification {
  readonly category: IntentCategory;
  readonly confidence: number;
  readonly alternatives: { category: IntentCategory; confidence: number }[];
  /** `classifier` or `model:<name>`. */
  readonly method: string;
  /** Why the answer is not what was asked for (a model that answered outside the schema). */
  readonly notice?: string;
}

const answerSchema: JSONSchema7 = {
  type: 'object',
  properties: {
    category: { type: 'string', enum: [...intentCategories] },
    confidence: { type: 'number', minimum: 0, maximum: 1 },
  },
  required: ['category', 'confidence'],
  additionalProperties: false,
};

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}

/** The shipped model (400 KB of JSON), read on first use: built, it is copied next to the bundle. */
const shippedModelFile =
  bundleDirectory === null
    ? path.join(packageRoot, 'src', 'modules', 'routing', 'intents', 'intent-model.json')
    : path.join(bundleDirectory, 'data', 'intent-model.json');

export class IntentClassifier {
  /** Built on the first classification: its tables hold ~5 MiB an idle service need not. */
  private shipped: LinearClassifier | undefined;

  constructor(private readonly models: ModelRegistry) {}

  private get classifier(): LinearClassifier {
    this.shipped ??= LinearClassifier.deserialize(
      JSON.parse(readFileSync(shippedModelFile, 'utf8')) as SerializedClassifier,
    );
    return this.shipped;
  }

  /** The shipped classifier's answer (sub-millisecond). */
  classify(text: string): Classification {
    const prediction = this.classifier.predict(text);
    const ranked = prediction.ranked.map((entry) => ({
      category: entry.label as IntentCategory,
      confidence: round(entry.probability),
    }));
    return {
      category: ranked[0]!.category,
      confidence: ranked[0]!.confidence,
      alternatives: ranked.slice(1, 4),
      method: 'classifier',
    };
  }

  /**
   * Asks chat model `modelName` (through its fallbacks) to classify, giving it the taxonomy and
   * the classifier's top candidates. Upstream failures propagate to the caller; a model that
   * answers outside the schema (many servers ignore `response_format`) is read for a category
   * name in its plain text, else the shipped classifier answers — either way with a notice.
   */
  async classifyWithModel(
    text: string,
    modelName: string,
    accountId: string,
    signal: AbortSignal,
  ): Promise<Classification> {
    const baseline = this.classify(text);
    // The router's own model call, recorded by account (it is made before any run or turn).
    const attribution = { accountId, apiKeyId: null, endUser: null, route: 'routing' };
    const models = new AgentModels(this.models, modelName, attribution, signal);
    const categories = intentCategories
      .map((category) => `- ${category}: ${taxonomy[category].description}`)
      .join('\n');
    const hints = [baseline, ...baseline.alternatives]
      .slice(0, 3)
      .map((entry) => `${entry.category} (${entry.confidence})`)
      .join(', ');
    const answer = await models.structured<{ category: string; confidence: number }>(
      {
        system: `You classify the intent of a user's message into exactly one category:\n${categories}\nA lexical classifier suggested: ${hints}. Judge for yourself; answer with the category and your confidence between 0 and 1.`,
        user: text.slice(0, 8000),
        maxTokens: 60,
        temperature: 0,
      },
      answerSchema,
    );
    if (!answer.structured) {
      const upper = answer.text.toUpperCase();
      const named = intentCategories.find((category) =>
        new RegExp(`(^|[^A-Z_])${category}([^A-Z_]|$)`).test(upper),
      );
      const notice = `${answer.reason}; ${named === undefined ? 'the shipped classifier answered' : 'its category was read from the plain text'}.`;
      if (named === undefined) return { ...baseline, notice };
      return {
        category: named,
        confidence: 0.5,
        alternatives: [baseline, ...baseline.alternatives]
          .filter((entry) => entry.category !== named)
          .slice(0, 3),
        method: `model:${modelName}`,
        notice,
      };
    }
    const category = isIntentCategory(answer.value.category)
      ? answer.value.category
      : baseline.category;
    return {
      category,
      confidence: round(Math.min(1, Math.max(0, answer.value.confidence))),
      alternatives: [baseline, ...baseline.alternatives]
        .filter((entry) => entry.category !== category)
        .slice(0, 3)
        .map((entry) => ({ category: entry.category, confidence: entry.confidence })),
      method: `model:${modelName}`,
    };
  }
}
