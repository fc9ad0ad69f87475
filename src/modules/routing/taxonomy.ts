// The intent taxonomy: the categories a message is classified into, what each means, and the agent
// capabilities (of the spec's agent types) that serve it when an account has such an agent.

export const intentCategories = [
  'GREETING',
  'QUESTION',
  'TASK',
  'CODE',
  'CREATIVE_WRITING',
  'SUMMARIZATION',
  'TRANSLATION',
  'DATA_ANALYSIS',
  'REASONING',
  'WEB_SEARCH',
  'KNOWLEDGE_LOOKUP',
  'COMPLAINT',
  'OTHER',
] as const;

export type IntentCategory = (typeof intentCategories)[number];

export interface CategoryInfo {
  readonly description: string;
  /**
   * Agent capabilities that serve the category, best first; empty when a chat model is the
   * natural target.
   */
  readonly capabilities: readonly string[];
}

export const taxonomy: Readonly<Record<IntentCategory, CategoryInfo>> = {
  GREETING: {
    description: 'Hello, thanks, goodbye and other small talk with no request in it.',
    capabilities: [],
  },
  QUESTION: {
    description: 'A general question of fact, definition or explanation a model can answer.',
    capabilities: [],
  },
  TASK: {
    description:
      'A practical request to plan, organise, advise or decide (a plan, a checklist, a recommendation).',
    capabilities: [],
  },
  CODE: {
    description: 'Writing, explaining, reviewing or debugging code, queries and configuration.',
    capabilities: [],
  },
  CREATIVE_WRITING: {
    description:
      'Producing new text: stories, poems, slogans, posts, emails, letters, product descriptions.',
    capabilities: ['creative_writing', 'text_generation'],
  },
  SUMMARIZATION: {
    description: 'Condensing a given text: a summary, key points, a TL;DR, meeting notes.',
    capabilities: ['text_summarization', 'key_point_extraction'],
  },
  TRANSLATION: {
    description: 'Rendering a text in another language, or asking how something is said in one.',
    capabilities: [],
  },
  DATA_ANALYSIS: {
    description:
      'Working on data: tables, CSV, spreadsheets, statistics, aggregates, charts, pivots.',
    capabilities: ['data_processing', 'table_generation'],
  },
  REASONING: {
    description:
      'A problem to work through: arithmetic and word problems, logic puzzles, step-by-step deduction.',
    capabilities: ['logical_reasoning', 'problem_solving'],
  },
  WEB_SEARCH: {
    description:
      'Needs the live web: current news, today’s prices or weather, recent releases, a given URL.',
    capabilities: ['web_search', 'content_extraction'],
  },
  KNOWLEDGE_LOOKUP: {
    description:
      'Asks about the organisation’s own documents: handbook, policies, internal docs, manuals.',
    capabilities: ['knowledge_base_search', 'document_retrieval'],
  },
  COMPLAINT: {
    description:
      'Dissatisfaction with a product or service: something broken, late, wrong, a refund.',
    capabilities: [],
  },
  OTHER: {
    description: 'None of the above, or no discernible request (noise, a single stray word).',
    capabilities: [],
  },
};

export function isIntentCategory(value: string): value is IntentCategory {
  return (intentCategories as readonly string[]).includes(value);
}
