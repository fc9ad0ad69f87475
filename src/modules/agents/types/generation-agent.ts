// GenerationAgent: writes text to the configured style, format and length.
import Type from 'typebox';
import { MissingParameterError } from '../../../errors/app-error.js';
import type { AgentType } from '../agent-type.js';

const formats = ['text', 'markdown', 'html'] as const;
const lengths = ['short', 'medium', 'long'] as const;
type Length = (typeof lengths)[number];

/** Target words per length, when max_words is not given. */
const wordsFor: Record<Length, number> = { short: 80, medium: 250, long: 600 };

export interface GenerationConfiguration {
  style?: string;
  format: (typeof formats)[number];
  length: Length;
  max_words?: number;
  temperature: number;
  instructions?: string;
}

const styleOptions = {
  style: Type.Optional(
    Type.String({
      maxLength: 500,
      description: 'Tone and voice, e.g. "friendly and concise" or "formal, for executives".',
    }),
  ),
  format: Type.Optional(
    Type.Union(
      formats.map((format) => Type.Literal(format)),
      { description: 'text (plain), markdown, or html (a fragment, no <html> or <body>).' },
    ),
  ),
  length: Type.Optional(Type.Union(lengths.map((length) => Type.Literal(length)))),
  max_words: Type.Optional(Type.Integer({ minimum: 10, maximum: 5000 })),
  temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
};

const configurationSchema = Type.Object(
  {
    ...styleOptions,
    format: Type.Union(
      formats.map((format) => Type.Literal(format)),
      { default: 'markdown', description: 'text (plain), markdown, or html (a fragment).' },
    ),
    length: Type.Union(
      lengths.map((length) => Type.Literal(length)),
      { default: 'medium', description: 'About 80, 250 or 600 words, unless max_words is set.' },
    ),
    temperature: Type.Number({ minimum: 0, maximum: 1, default: 0.7 }),
    instructions: Type.Optional(Type.String({ maxLength: 4000 })),
  },
  { additionalProperties: false },
);

const parametersSchema = Type.Object(styleOptions, { additionalProperties: false });

function wordCount(text: string): number {
  return text.trim() === '' ? 0 : text.trim().split(/\s+/).length;
}

export const generationAgent: AgentType<GenerationConfiguration> = {
  id: 'GenerationAgent',
  name: 'Generation agent',
  description:
    'Writes text — drafts, replies, descriptions, stories — in the configured style, format and length. Needs a model.',
  capabilities: ['text_generation', 'creative_writing'],
  configurationSchema,
  parametersSchema,
  validateInput(input) {
    if (input.query === undefined || input.query.trim() === '') {
      throw new MissingParameterError('query', "'query' (what to write) is required.");
    }
  },
  async run(context, configuration, input, parameters) {
    if (!context.models.available()) throw context.models.unavailableError('GenerationAgent');
    const settings = { ...configuration, ...parameters };
    const words = settings.max_words ?? wordsFor[settings.length];
    const formatRule = {
      text: 'Write plain text: no Markdown, no HTML.',
      markdown: 'Write Markdown (headings, lists and emphasis where they help).',
      html: 'Write an HTML fragment (p, h2, ul, strong …), without <html>, <head> or <body>.',
    }[settings.format];
    const text = await context.models.text({
      system: [
        'You are a skilled writer. Write exactly what is asked, with no preamble and no notes about the text.',
        formatRule,
        `Length: about ${words} words${settings.max_words === undefined ? '' : ', never more'}.`,
        settings.style === undefined ? '' : `Style: ${settings.style}.`,
        settings.instructions ?? '',
      ]
        .filter((part) => part !== '')
        .join('\n'),
      user: input.query ?? '',
      temperature: settings.temperature,
      // Room for the words plus Markdown/HTML markup.
      maxTokens: Math.ceil(words * 2.5) + 64,
    });
    return { text: text.trim(), format: settings.format, word_count: wordCount(text) };
  },
};
