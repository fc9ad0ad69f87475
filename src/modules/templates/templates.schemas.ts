// The HTTP shapes of the prompt template catalog: an entry of the list and one template in full.
import Type from 'typebox';

export const TemplateEntrySchema = Type.Object({
  id: Type.String({ description: 'Equal to `name`.' }),
  name: Type.String(),
  display_name: Type.String(),
  description: Type.String(),
});

export const TemplateListSchema = Type.Object({ templates: Type.Array(TemplateEntrySchema) });

export const TemplateNameParams = Type.Object({ template_name: Type.String({ maxLength: 64 }) });

export const TemplateDetailSchema = Type.Object({
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
