// The HTTP shapes of layouts: the request body and the answer of POST /v1/layout, whose components
// are the shared LayoutComponent* schemas of the published document (see components.ts).
import Type from 'typebox';
import { commonParameters } from '../../http/schemas/common.js';
import { componentSchemaId, componentTypes, type LayoutComponent } from './components.js';
import { contentTypes, templateCatalog, templateNames } from './templates.js';

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

export const LayoutBody = Type.Object(
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
);

/** The 200 answer; its components refer to the shared schemas the plugin adds (components.ts). */
export const LayoutResponse = Type.Object({
  success: Type.Boolean(),
  layout: Type.Object({
    template: TemplateSchema,
    components: Type.Array(
      Type.Unsafe<LayoutComponent>(
        Type.Union(componentTypes.map((type) => Type.Ref(componentSchemaId(type)))),
      ),
    ),
    styling: Type.Object({
      color_scheme: Type.String(),
      fonts: Type.Object({ headings: Type.String(), body: Type.String() }),
    }),
    content_analysis: ContentAnalysisSchema,
    template_source: Type.Union([Type.Literal('suggested'), Type.Literal('analysis')]),
  }),
});
