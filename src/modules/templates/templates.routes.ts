// GET /v1/templates and /v1/templates/{template_name}: the prompt template catalog, as one Fastify
// plugin over the catalog.
import { access } from '../../auth/scopes.js';
import type { TemplateDefinition } from '../../config/config.js';
import { NotFoundError } from '../../errors/app-error.js';
import type { App } from '../../http/types.js';
import type { TemplateCatalog } from './template-catalog.js';
import {
  TemplateDetailSchema,
  TemplateListSchema,
  TemplateNameParams,
} from './templates.schemas.js';
import { featurePlugin, type FeaturePlugin } from '../../http/feature-plugin.js';

export type TemplatesPlugin = FeaturePlugin;

/** The routes of the template catalog, registered by app.ts like any Fastify plugin. */
export function templatesPlugin(templates: TemplateCatalog): TemplatesPlugin {
  return featurePlugin('templates', (app) => {
    templateRoutes(app, templates);
  });
}

function entryJson(template: TemplateDefinition) {
  return {
    id: template.name,
    name: template.name,
    display_name: template.displayName,
    description: template.description,
  };
}

function templateRoutes(app: App, templates: TemplateCatalog): void {
  app.get(
    '/v1/templates',
    {
      config: { access: access.scopes('models:read') },
      schema: {
        operationId: 'listTemplates',
        tags: ['Templates'],
        summary: 'List prompt templates',
        response: { 200: TemplateListSchema },
      },
    },
    () => ({ templates: templates.list().map(entryJson) }),
  );

  app.get(
    '/v1/templates/:template_name',
    {
      config: { access: access.scopes('models:read') },
      schema: {
        operationId: 'getTemplate',
        tags: ['Templates'],
        summary: 'Get a prompt template',
        params: TemplateNameParams,
        response: { 200: TemplateDetailSchema },
      },
    },
    (request) => {
      const template = templates.find(request.params.template_name);
      if (template === undefined) throw new NotFoundError('Template', request.params.template_name);
      return {
        ...entryJson(template),
        system_prompt: template.systemPrompt,
        variables: template.variables.map((variable) => variable.name),
        required_variables: template.variables
          .filter((variable) => variable.required)
          .map((variable) => variable.name),
        variable_details: template.variables.map((variable) => ({ ...variable })),
        example_usage: template.exampleUsage,
      };
    },
  );
}
