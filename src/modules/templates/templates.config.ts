// The prompt templates the config file adds (or redefines): their schema, and their definitions
// once each system prompt is known to be a Mustache template.
import Mustache from 'mustache';
import Type, { type Static } from 'typebox';
import { Closed, notReservedKey, type Problems } from '../../config/config-kit.js';

/** A template variable's name: a view key of its Mustache template, so never a reserved name. */
const VariableName = () => Type.String({ pattern: '^[a-z0-9_]{1,64}$', ...notReservedKey });

export const TemplateEntrySchema = Closed({
  name: Type.String({
    pattern: '^[a-z0-9_]{1,64}$',
    message: 'lower-case letters, digits and _ only',
  }),
  display_name: Type.String({ minLength: 1, maxLength: 200 }),
  description: Type.Optional(Type.String({ maxLength: 2000 })),
  system_prompt: Type.String({ minLength: 1, maxLength: 100_000 }),
  variables: Type.Optional(
    Type.Array(
      Type.Union([
        VariableName(),
        Closed({
          name: VariableName(),
          required: Type.Optional(Type.Boolean()),
          description: Type.Optional(Type.String({ maxLength: 1000 })),
          default: Type.Optional(Type.Union([Type.String({ maxLength: 10_000 }), Type.Null()])),
        }),
      ]),
      { maxItems: 50 },
    ),
  ),
  example_usage: Type.Optional(Type.String({ maxLength: 10_000 })),
});

export const TemplatesFileSchema = Type.Array(TemplateEntrySchema, { maxItems: 200 });

/** Definitions of the configured templates (variables as names or objects), each checked. */
export function templatesConfig(
  entries: Static<typeof TemplatesFileSchema> = [],
  context: { label: string; problems: Problems },
) {
  entries.forEach((entry, index) => {
    try {
      Mustache.parse(entry.system_prompt);
    } catch (error) {
      const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
      context.problems.push(
        `${context.label}: templates[${index}].system_prompt: not a valid template (${reason})`,
      );
    }
  });
  return entries.map((entry) => ({
    name: entry.name,
    displayName: entry.display_name,
    description: entry.description ?? '',
    systemPrompt: entry.system_prompt,
    variables: (entry.variables ?? []).map((variable) =>
      typeof variable === 'string'
        ? { name: variable, required: false, description: '', default: null }
        : {
            name: variable.name,
            required: variable.required ?? false,
            description: variable.description ?? '',
            default: variable.default ?? null,
          },
    ),
    exampleUsage: entry.example_usage ?? '',
  }));
}
