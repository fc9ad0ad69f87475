// GET /v1/templates and /v1/templates/{template_name}: the prompt template catalog, as one Fastify
// plugin over the catalog.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginCallback, RawServerDefault } from 'fastify';
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

export type TemplatesPlugin = FastifyPluginCallback<
  Record<never, never>,
  RawServerDefault,
  TypeBoxTypeProvider
>;

/** The routes of the template catalog, registered by app.ts like any Fastify plugin. */
export function templatesPlugin(templates: TemplateCatalog): TemplatesPlugin {
  const plugin: TemplatesPlugin = (app, _options, done) => {
    templateRoutes(app, templates);
    done();
  };
  // Not encapsulated (Fastify's skip-override, as routing's plugin): its routes join the app's
  // own context, with the app's strict validator and hooks, exactly as before they moved here.
  return Object.assign(plugin, {
    [Symbol.for('skip-override')]: true,
    [Symbol.for('fastify.display-name')]: 'templates',
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
