// POST /v1/layout (spec operation 35): a presentation layout for a message, usually a model's
// Markdown answer: a template, a flat list of allow-listed components and styling.
import { access } from '../../auth/scopes.js';
import { clientGoneSignal } from '../../http/streaming.js';
import type { TextPool } from '../../text-pool/text-pool.js';
import { componentSchemas } from './components.js';
import { LayoutBody, LayoutResponse } from './layout.schemas.js';
import { featurePlugin, type FeaturePlugin } from '../../http/feature-plugin.js';

export type LayoutPlugin = FeaturePlugin;

/** The route of layouts, registered by app.ts like any Fastify plugin. */
export function layoutPlugin(text: Pick<TextPool, 'layout'>): LayoutPlugin {
  return featurePlugin('layout', (app) => {
    for (const { schema } of componentSchemas()) app.addSchema(schema);
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
          body: LayoutBody,
          response: { 200: LayoutResponse },
        },
      },
      async (request, reply) => {
        const body = request.body;
        // Parsed in the text worker threads: Markdown lexing can take time far beyond linear.
        const layout = await text.layout(
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
  });
}
