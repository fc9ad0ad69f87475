// GET /v1/templates and /v1/templates/{template_name}: the prompt template catalog.
import Type from 'typebox';
import { access } from '../../auth/scopes.js';
import type { TemplateDefinition } from '../../config/config.js';
import { NotFoundError } from '../../errors/app-error.js';
import type { Services } from '../../services.js';
import type { App } from '../types.js';

const TemplateEntrySchema = Type.Object({
  id: Type.String({ description: 'Equal to `name`.' }),
  name: Type.String(),
  display_name: Type.String(),
  description: Type.String(),
});

const TemplateDetailSchema = Type.Object({
  ...TemplateEntrySchema.properties,
  system_prompt: Type.String({
    description:
      'Mustache text: `{{variable}}` is replaced by its value; `{{#variable}}…{{/variable}}` appears only when the variable is set.',
  }),
  variables: Type.Array(Type.String(), { description: 'The variable names.' }),
  required_variables: Type.Array(Type.String()),
  variable_details: Type.Array(
    Type.Object({
      name: Type.String(),
      required: Type.Boolean({
        description: 'Built-in templates require none: every variable has a default.',
      }),
      description: Type.String(),
      default: Type.Union([Type.String(), Type.Null()], {
        description:
          'Used when the conversation gives no value; null: the text it fills is left out.',
      }),
    }),
  ),
  example_usage: Type.String({
    description: 'A body for POST /v1/conversations/{conversation_id}/template.',
  }),
});

function entry(template: TemplateDefinition) {
  return {
    id: template.name,
    name: template.name,
    display_name: template.displayName,
    description: template.description,
  };
}

export function templateRoutes(app: App, services: Services): void {
  app.get(
    '/v1/templates',
    {
      config: { access: access.scopes('models:read') },
      schema: {
        operationId: 'listTemplates',
        tags: ['Templates'],
        summary: 'List prompt templates',
        response: { 200: Type.Object({ templates: Type.Array(TemplateEntrySchema) }) },
      },
    },
    () => ({ templates: services.templates.list().map(entry) }),
  );

  app.get(
    '/v1/templates/:template_name',
    {
      config: { access: access.scopes('models:read') },
      schema: {
        operationId: 'getTemplate',
        tags: ['Templates'],
        summary: 'Get a prompt template',
        params: Type.Object({ template_name: Type.String({ maxLength: 64 }) }),
        response: { 200: TemplateDetailSchema },
      },
    },
    (request) => {
      const template = services.templates.find(request.params.template_name);
      if (template === undefined) throw new NotFoundError('Template', request.params.template_name);
      return {
        ...entry(template),
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
