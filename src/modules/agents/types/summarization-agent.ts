// SummarizationAgent: a summary and key points of a text. A model writes them when one is
// available and answers in the expected structure; otherwise sentences are selected by TextRank,
// and the result says `method: 'extractive'` (with a notice saying why) so nobody takes it for a
// written summary.
import type { JSONSchema7 } from '@ai-sdk/provider';
import Type from 'typebox';
import { MissingParameterError } from '../../../errors/app-error.js';
import type { AgentType } from '../agent-type.js';

const formats = ['paragraph', 'bullets', 'json'] as const;
const lengths = ['short', 'medium', 'long'] as const;
const methods = ['auto', 'model', 'extractive'] as const;
type Length = (typeof lengths)[number];

export interface SummarizationConfiguration {
  output_format: (typeof formats)[number];
  length: Length;
  key_points: number;
  method: (typeof methods)[number];
  instructions?: string;
}

const wordsFor: Record<Length, number> = { short: 50, medium: 120, long: 250 };
const sentencesFor: Record<Length, number> = { short: 2, medium: 4, long: 7 };

const options = {
  output_format: Type.Union(
    formats.map((format) => Type.Literal(format)),
    {
      description:
        'paragraph: `summary` is prose; bullets: `summary` is a Markdown list of the key points; json: prose plus `structured: {summary, key_points}`.',
    },
  ),
  length: Type.Union(
    lengths.map((length) => Type.Literal(length)),
    { description: 'About 50, 120 or 250 words (extractive: 2, 4 or 7 sentences).' },
  ),
  key_points: Type.Integer({ minimum: 1, maximum: 20 }),
  method: Type.Union(
    methods.map((method) => Type.Literal(method)),
    {
      description:
        'auto: the model when one is available, else extractive; model: fail without one; extractive: never a model. A model whose answer misses the structure twice gives an extractive summary with a notice.',
    },
  ),
};

const configurationSchema = Type.Object(
  {
    output_format: { ...options.output_format, default: 'paragraph' },
    length: { ...options.length, default: 'medium' },
    key_points: { ...options.key_points, default: 5 },
    method: { ...options.method, default: 'auto' },
    instructions: Type.Optional(Type.String({ maxLength: 4000 })),
  },
  { additionalProperties: false },
);

const parametersSchema = Type.Object(
  {
    output_format: Type.Optional(options.output_format),
    length: Type.Optional(options.length),
    key_points: Type.Optional(options.key_points),
    method: Type.Optional(options.method),
  },
  { additionalProperties: false },
);

const extractiveNotice =
  'Extractive summary: sentences selected from the text by TextRank, not written by a model.';

function shaped(
  settings: SummarizationConfiguration,
  summary: string,
  keyPoints: string[],
  method: 'model' | 'extractive',
  notice = extractiveNotice,
) {
  return {
    summary:
      settings.output_format === 'bullets'
        ? keyPoints.map((point) => `- ${point}`).join('\n')
        : summary,
    key_points: keyPoints,
    method,
    output_format: settings.output_format,
    ...(settings.output_format === 'json'
      ? { structured: { summary, key_points: keyPoints } }
      : {}),
    ...(method === 'extractive' ? { notice } : {}),
  };
}

export const summarizationAgent: AgentType<SummarizationConfiguration> = {
  id: 'SummarizationAgent',
  name: 'Summarization agent',
  description:
    'Summarises a text and lists its key points. With a model it writes the summary; without one it selects the central sentences (TextRank) and says so (`method: "extractive"`).',
  capabilities: ['text_summarization', 'key_point_extraction'],
  configurationSchema,
  parametersSchema,
  validateInput(input) {
    if (input.query === undefined || input.query.trim() === '') {
      throw new MissingParameterError('query', "'query' (the text to summarise) is required.");
    }
  },
  async run(context, configuration, input, parameters) {
    const settings = { ...configuration, ...parameters };
    const text = input.query ?? '';
    const useModel =
      settings.method === 'model' || (settings.method === 'auto' && context.models.available());
    const extractive = async (notice?: string) => {
      const extract = await context.text.summarize(text, {
        sentences: sentencesFor[settings.length],
      });
      const keyPoints = extract.keyPoints.slice(0, settings.key_points);
      return shaped(settings, extract.summary, keyPoints, 'extractive', notice);
    };
    if (!useModel) return extractive();
    if (!context.models.available()) throw context.models.unavailableError('SummarizationAgent');
    const schema: JSONSchema7 = {
      type: 'object',
      properties: {
        summary: { type: 'string', minLength: 1 },
        key_points: {
          type: 'array',
          items: { type: 'string', minLength: 1 },
          minItems: 1,
          maxItems: settings.key_points,
        },
      },
      required: ['summary', 'key_points'],
      additionalProperties: false,
    };
    const answer = await context.models.structured<{ summary: string; key_points: string[] }>(
      {
        system: [
          'You summarise texts faithfully: keep the main claims, numbers and conclusions; add nothing that is not in the text; write in the language of the text.',
          `The summary has about ${wordsFor[settings.length]} words of prose. The key points are at most ${settings.key_points} short, self-contained statements, most important first.`,
          settings.instructions ?? '',
        ]
          .filter((part) => part !== '')
          .join('\n'),
        user: `Text to summarise:\n\n${text}`,
        temperature: 0.2,
      },
      schema,
    );
    if (!answer.structured) {
      return extractive(`${extractiveNotice} ${answer.reason}.`);
    }
    return shaped(settings, answer.value.summary.trim(), answer.value.key_points, 'model');
  },
};
