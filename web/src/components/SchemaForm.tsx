// A form built from a JSON Schema object (an agent type's configuration or parameters schema):
// strings, numbers, booleans, enums and lists get their own inputs; nested objects are edited as JSON.
import {
  MultiSelect,
  NumberInput,
  Select,
  Stack,
  Switch,
  TagsInput,
  Textarea,
  TextInput,
} from '@mantine/core';
import { useState } from 'react';

export type JsonSchema = {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  enum?: unknown[];
  anyOf?: JsonSchema[];
  const?: unknown;
  items?: JsonSchema;
  description?: string;
  title?: string;
  minimum?: number;
  maximum?: number;
  maxLength?: number;
  default?: unknown;
};

/** The schema's defaults for its top-level properties (a new form starts from them). */
export function defaultsOf(schema: JsonSchema): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    if (property.default !== undefined) values[name] = property.default;
  }
  return values;
}

function choices(schema: JsonSchema): string[] | null {
  if (Array.isArray(schema.enum)) return schema.enum.map(String);
  if (Array.isArray(schema.anyOf) && schema.anyOf.every((option) => option.const !== undefined)) {
    return schema.anyOf.map((option) => String(option.const));
  }
  return null;
}

function typeOf(schema: JsonSchema): string | undefined {
  if (Array.isArray(schema.type)) return schema.type.find((type) => type !== 'null');
  return schema.type;
}

function JsonField({
  label,
  description,
  value,
  onChange,
  required,
}: {
  label: string;
  description?: string;
  value: unknown;
  onChange: (value: unknown) => void;
  required: boolean;
}) {
  const [text, setText] = useState(value === undefined ? '' : JSON.stringify(value, null, 2));
  const [problem, setProblem] = useState<string | null>(null);
  return (
    <Textarea
      label={label}
      description={description ? `${description} (JSON)` : 'JSON'}
      required={required}
      autosize
      minRows={2}
      value={text}
      error={problem}
      onChange={(event) => {
        const next = event.currentTarget.value;
        setText(next);
        if (next.trim() === '') {
          setProblem(null);
          onChange(undefined);
          return;
        }
        try {
          onChange(JSON.parse(next));
          setProblem(null);
        } catch {
          setProblem('Not valid JSON yet');
        }
      }}
    />
  );
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
      {properties.map(([name, property]) => {
        const label = property.title ?? name;
        const description = property.description;
        // A property with a default is filled in by the service when left out.
        const isRequired = required.has(name) && property.default === undefined;
        const current = value[name];
        const id = `${idPrefix}-${name}`;
        const options = choices(property);
        const type = typeOf(property);
        if (options !== null) {
          return (
            <Select
              key={name}
              id={id}
              label={label}
              description={description}
              required={isRequired}
              data={options}
              value={
                typeof current === 'string' || typeof current === 'number' ? String(current) : null
              }
              onChange={(next) => set(name, next ?? undefined)}
              clearable={!isRequired}
            />
          );
        }
        if (type === 'boolean') {
          return (
            <Switch
              key={name}
              id={id}
              label={label}
              description={description}
              checked={current === true}
              onChange={(event) => set(name, event.currentTarget.checked)}
            />
          );
        }
        if (type === 'integer' || type === 'number') {
          return (
            <NumberInput
              key={name}
              id={id}
              label={label}
              description={description}
              required={isRequired}
              min={property.minimum}
              max={property.maximum}
              allowDecimal={type === 'number'}
              value={typeof current === 'number' ? current : ''}
              onChange={(next) => set(name, typeof next === 'number' ? next : undefined)}
            />
          );
        }
        if (type === 'string') {
          const Input = (property.maxLength ?? 0) > 300 ? Textarea : TextInput;
          return (
            <Input
              key={name}
              id={id}
              label={label}
              description={description}
              required={isRequired}
              value={typeof current === 'string' ? current : ''}
              onChange={(event) => set(name, event.currentTarget.value)}
            />
          );
        }
        if (type === 'array' && property.items !== undefined) {
          const itemChoices = choices(property.items);
          const list = Array.isArray(current) ? current.map(String) : [];
          if (itemChoices !== null) {
            return (
              <MultiSelect
                key={name}
                id={id}
                label={label}
                description={description}
                data={itemChoices}
                value={list}
                onChange={(next) => set(name, next.length === 0 ? undefined : next)}
              />
            );
          }
          if (typeOf(property.items) === 'string') {
            return (
              <TagsInput
                key={name}
                id={id}
                label={label}
                description={description ? `${description} (Enter after each)` : 'Enter after each'}
                value={list}
                onChange={(next) => set(name, next.length === 0 ? undefined : next)}
              />
            );
          }
        }
        return (
          <JsonField
            key={name}
            label={label}
            description={description}
            value={current}
            required={isRequired}
            onChange={(next) => set(name, next)}
          />
        );
      })}
    </Stack>
  );
}
