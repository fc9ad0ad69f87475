// Builds a layout from a message (usually a model's Markdown answer): parses it with the service's
// Markdown lexer, has layout-builder.ts turn the blocks into a flat list of allow-listed components
// in reading order, analyses what the message contains and picks a template.
import { lexMarkdown, type MarkdownTokens } from '../../text/markdown.js';
import type { LayoutComponent } from './components.js';
import { Builder, sourcesHeading } from './layout-builder.js';
import {
  chooseTemplate,
  contentTypes,
  templateCatalog,
  type ContentAnalysis,
  type ContentMeasures,
  type ContentType,
  type LayoutComplexity,
  type TemplateInfo,
  type TemplateName,
} from './templates.js';

export interface LayoutRequest {
  readonly message: string;
  /** A valid template name to use instead of the analysis's choice. */
  readonly suggestedTemplate: TemplateName | null;
  /** The caller's analysis, used as given (for the template choice and in the answer). */
  readonly contentAnalysis: ContentAnalysis | null;
}

export interface Layout {
  readonly template: TemplateName;
  readonly components: LayoutComponent[];
  readonly styling: TemplateInfo['styling'];
  readonly content_analysis: ContentAnalysis;
  /** Where the template came from: the caller's suggestion, or the content analysis. */
  readonly template_source: 'suggested' | 'analysis';
}

function complexityOf(
  types: ReadonlySet<ContentType>,
  measures: ContentMeasures,
  blocks: number,
): LayoutComplexity {
  if (blocks <= 3 && types.size <= 2 && measures.words <= 150) return 'simple';
  if (blocks <= 12 && types.size <= 4 && measures.words <= 600) return 'moderate';
  return 'complex';
}

/** The layout of `request.message`; the same request always gives the same layout. */
export function buildLayout(request: LayoutRequest): Layout {
  const builder = new Builder();
  builder.measures.characters = request.message.length;
  let previousHeading: string | null = null;
  for (const token of lexMarkdown(request.message)) {
    builder.block(token, previousHeading);
    if (token.type === 'heading') previousHeading = (token as MarkdownTokens.Heading).text.trim();
    else if (token.type !== 'space') previousHeading = null;
  }
  const sources = dedupe([...(builder.sourcesFromSection ?? []), ...builder.links]);
  if (sources.length > 0) builder.add('sources', { items: sources });
  // A "Sources" heading left with nothing under it is dropped with its list.
  const components = builder.components.filter((component, index, all) => {
    if (component.type !== 'heading' || builder.sourcesFromSection === null) return true;
    const next = all[index + 1];
    return !(
      sourcesHeading.test(component.config.text) &&
      (next === undefined || next.type === 'heading' || next.type === 'sources')
    );
  });
  const measures: ContentMeasures = builder.measures;
  const analysed: ContentAnalysis = {
    contentTypes: contentOrder(builder.types),
    complexity: complexityOf(builder.types, measures, components.length),
  };
  const analysis = request.contentAnalysis ?? analysed;
  const template =
    request.suggestedTemplate ??
    chooseTemplate(analysis.contentTypes, request.contentAnalysis === null ? measures : null);
  return {
    template,
    components,
    styling: templateCatalog[template].styling,
    content_analysis: analysis,
    template_source: request.suggestedTemplate === null ? 'analysis' : 'suggested',
  };
}

function dedupe(links: { title: string; url: string }[]): { title: string; url: string }[] {
  const seen = new Set<string>();
  return links.filter((link) => {
    if (seen.has(link.url)) return false;
    seen.add(link.url);
    return true;
  });
}

function contentOrder(types: ReadonlySet<ContentType>): ContentType[] {
  return contentTypes.filter((type) => types.has(type));
}
