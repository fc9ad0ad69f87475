// A form built from a JSON Schema object (an agent type's configuration or parameters schema):
// strings, numbers, booleans, enums and lists get their own inputs (SchemaFields.tsx); nested objects
// are edited as JSON.
import { Stack } from '@mantine/core';
import { SchemaField, type JsonSchema } from './SchemaFields';

export type { JsonSchema };

/** The schema's defaults for its top-level properties (a new form starts from them). */
export function defaultsOf(schema: JsonSchema): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    if (property.default !== undefined) values[name] = property.default;
  }
  return values;
}

export function SchemaForm({
  schema,
  value,
  onChange,
  idPrefix,
}: {
  schema: JsonSchema;
  value: Record<string, unknown>;
  onChange: (value: Record<string, unknown>) => void;
  idPrefix: string;
}) {
  const properties = Object.entries(schema.properties ?? {});
  const required = new Set(schema.required ?? []);
  const set = (name: string, next: unknown) => {
    const copy = { ...value };
    if (next === undefined || next === '') delete copy[name];
    else copy[name] = next;
    onChange(copy);
  };
  if (properties.length === 0) return null;
  return (
    <Stack gap="xs">
      {properties.map(([name, property]) => (
        <SchemaField
          key={name}
          id={`${idPrefix}-${name}`}
          label={property.title ?? name}
          description={property.description}
          // A property with a default is filled in by the service when left out.
          required={required.has(name) && property.default === undefined}
          property={property}
          value={value[name]}
          onChange={(next) => set(name, next)}
        />
      ))}
    </Stack>
  );
}
