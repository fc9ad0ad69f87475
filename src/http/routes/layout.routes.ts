// POST /v1/layout (spec operation 35): a presentation layout for a message, usually a model's
// Markdown answer: a template, a flat list of allow-listed components and styling.
import Type from 'typebox';
import { access } from '../../auth/scopes.js';
import {
  componentSchemaId,
  componentSchemas,
  type LayoutComponent,
} from '../../layout/components.js';
import { contentTypes, templateCatalog, templateNames } from '../../layout/templates.js';
import type { Services } from '../../services.js';
import { commonParameters } from '../schemas/common.js';
import { clientGoneSignal } from '../streaming.js';
import type { App } from '../types.js';

/** A string that is one of `values` (an `enum` in the document, a literal union in TypeScript). */
function oneOf<T extends string>(values: readonly T[], description?: string) {
  return Type.Unsafe<T>({
    type: 'string',
    enum: [...values],
    ...(description === undefined ? {} : { description }),
  });
}

const ContentTypeSchema = oneOf(contentTypes);
const ComplexitySchema = Type.Union([
  Type.Literal('simple'),
  Type.Literal('moderate'),
  Type.Literal('complex'),
]);
const TemplateSchema = oneOf(
  templateNames,
  `A template of the catalog: ${templateNames.map((name) => `${name} (${templateCatalog[name].description})`).join('; ')}`,
);

const ContentAnalysisSchema = Type.Object(
  {
    contentTypes: Type.Array(ContentTypeSchema, { maxItems: contentTypes.length }),
    complexity: ComplexitySchema,
  },
  { additionalProperties: false },
);

/** Layouts are built from at most this much text. */
const maxLayoutMessageLength = 100_000;

export function layoutRoutes(app: App, services: Services): void {
  const components = componentSchemas();
  for (const { schema } of components) app.addSchema(schema);

  app.post(
    '/v1/layout',
    {
      config: { access: access.scopes('chat:write'), feature: 'dynamic_layout_engine' },
      schema: {
        operationId: 'generateLayout',
        tags: ['Layout'],
        summary: 'Generate a layout',
        description:
          'Parses the message as Markdown (plain text is paragraphs), analyses what it contains (headings, paragraphs, lists, ordered steps, code with its language, tables, numeric series that suit a chart, quotations, callouts, math, links, images), picks a template from the catalog and builds a flat list of components in reading order — each `{type, id, config}` with an id derived from its content (schemas `LayoutComponent*`). `routing_result.suggested_template` is used when given; a given `routing_result.content_analysis` is used as is. The same input always gives the same layout. The message is parsed in the text worker threads within a deadline of `text.timeout_ms` plus `text.timeout_ms_per_mib` per MiB (2 s + 6 s per MiB by default): Markdown that takes longer (thousands of unmatched `*`, `_` or `<!--`, say) gets 400 `invalid_parameter` on `message`, and a full worker queue 503 `service_unavailable` with `Retry-After`.',
        body: Type.Object(
          {
            ...commonParameters(),
            message: Type.String({
              minLength: 1,
              maxLength: maxLayoutMessageLength,
              description: 'The text to present, usually a model’s Markdown answer.',
            }),
            routing_result: Type.Optional(
              Type.Object(
                {
                  route_to: Type.Optional(Type.String({ maxLength: 200 })),
                  route_type: Type.Optional(Type.String({ maxLength: 20 })),
                  route_id: Type.Optional(Type.String({ maxLength: 200 })),
                  confidence: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
                  suggested_template: Type.Optional(TemplateSchema),
                  content_analysis: Type.Optional(ContentAnalysisSchema),
                },
                {
                  additionalProperties: false,
                  description: 'A route call’s answer, or its parts; all optional.',
                },
              ),
            ),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({
            success: Type.Boolean(),
            layout: Type.Object({
              template: TemplateSchema,
              components: Type.Array(
                Type.Unsafe<LayoutComponent>(
                  Type.Union(components.map(({ type }) => Type.Ref(componentSchemaId(type)))),
                ),
              ),
              styling: Type.Object({
                color_scheme: Type.String(),
                fonts: Type.Object({ headings: Type.String(), body: Type.String() }),
              }),
              content_analysis: ContentAnalysisSchema,
              template_source: Type.Union([Type.Literal('suggested'), Type.Literal('analysis')]),
            }),
          }),
        },
      },
    },
    async (request, reply) => {
      const body = request.body;
      // Parsed in the text worker threads: Markdown lexing can take time far beyond linear.
      const layout = await services.text.layout(
        {
          message: body.message,
          suggestedTemplate: body.routing_result?.suggested_template ?? null,
          contentAnalysis: body.routing_result?.content_analysis ?? null,
        },
        clientGoneSignal(reply),
      );
      return { success: true, layout };
    },
  );
}
