// The layout template catalog: what each template is for, its styling, and the rule that picks
// one from a content analysis (first matching rule wins, so the choice is deterministic).

export const contentTypes = [
  'text',
  'headings',
  'list',
  'steps',
  'code',
  'table',
  'chart_data',
  'quote',
  'callout',
  'math',
  'links',
  'image',
] as const;
export type ContentType = (typeof contentTypes)[number];

export type LayoutComplexity = 'simple' | 'moderate' | 'complex';

export interface ContentAnalysis {
  readonly contentTypes: ContentType[];
  readonly complexity: LayoutComplexity;
}

/** Measurements the rules use beyond the content types. */
export interface ContentMeasures {
  readonly words: number;
  readonly headings: number;
  readonly paragraphs: number;
  readonly listItems: number;
  readonly steps: number;
  readonly codeBlocks: number;
  readonly codeCharacters: number;
  readonly characters: number;
  readonly tables: number;
  readonly links: number;
}

export const templateNames = [
  'simple_answer',
  'article',
  'step_by_step',
  'code_walkthrough',
  'data_report',
  'research_brief',
  'list_summary',
] as const;
export type TemplateName = (typeof templateNames)[number];

export interface TemplateInfo {
  readonly description: string;
  readonly styling: {
    readonly color_scheme: string;
    readonly fonts: { readonly headings: string; readonly body: string };
  };
}

export const templateCatalog: Readonly<Record<TemplateName, TemplateInfo>> = {
  simple_answer: {
    description: 'A short answer in a few paragraphs, without structure.',
    styling: { color_scheme: 'neutral', fonts: { headings: 'Inter', body: 'Inter' } },
  },
  article: {
    description: 'Sections under headings, read top to bottom.',
    styling: { color_scheme: 'light', fonts: { headings: 'Inter', body: 'Source Serif 4' } },
  },
  step_by_step: {
    description: 'Numbered instructions are the main content (how-to, procedures).',
    styling: { color_scheme: 'light', fonts: { headings: 'Inter', body: 'Inter' } },
  },
  code_walkthrough: {
    description: 'Code blocks with explanations between them.',
    styling: { color_scheme: 'dark', fonts: { headings: 'Inter', body: 'JetBrains Mono' } },
  },
  data_report: {
    description: 'Tables and charts of numbers, with commentary.',
    styling: { color_scheme: 'data', fonts: { headings: 'Inter', body: 'Inter' } },
  },
  research_brief: {
    description: 'Findings backed by sources and quotations.',
    styling: { color_scheme: 'light', fonts: { headings: 'Merriweather', body: 'Source Serif 4' } },
  },
  list_summary: {
    description: 'Mostly bullet points: key points, options, checklists.',
    styling: { color_scheme: 'neutral', fonts: { headings: 'Inter', body: 'Inter' } },
  },
};

export function isTemplateName(value: string): value is TemplateName {
  return (templateNames as readonly string[]).includes(value);
}

/**
 * The rules, in order: code (two blocks, or a third of the text) → code_walkthrough; a table or
 * chartable numbers → data_report; ordered steps (3+) that outweigh other lists → step_by_step;
 * two or more links or a quotation with a link → research_brief; two or more headings →
 * article; list items outnumbering paragraphs → list_summary; otherwise simple_answer. A caller's
 * content types (without measures) use the same order on the types alone.
 */
export function chooseTemplate(
  types: readonly ContentType[],
  measures: ContentMeasures | null,
): TemplateName {
  const has = (type: ContentType) => types.includes(type);
  if (measures === null) {
    if (has('code')) return 'code_walkthrough';
    if (has('table') || has('chart_data')) return 'data_report';
    if (has('steps')) return 'step_by_step';
    if (has('links') || has('quote')) return 'research_brief';
    if (has('headings')) return 'article';
    if (has('list')) return 'list_summary';
    return 'simple_answer';
  }
  if (
    measures.codeBlocks >= 2 ||
    (measures.codeBlocks === 1 && measures.codeCharacters * 3 >= measures.characters)
  ) {
    return 'code_walkthrough';
  }
  if (has('table') || has('chart_data')) return 'data_report';
  if (measures.steps >= 3 && measures.steps >= measures.listItems - measures.steps) {
    return 'step_by_step';
  }
  if (measures.links >= 2 || (has('quote') && measures.links >= 1)) return 'research_brief';
  if (measures.headings >= 2) return 'article';
  if (measures.codeBlocks === 1) return 'code_walkthrough';
  if (measures.listItems > measures.paragraphs) return 'list_summary';
  return 'simple_answer';
}
