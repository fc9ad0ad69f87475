// The inputs of a schema form, one component per kind of property: a choice, a switch, a number, a
// string, a list (of choices or of strings), and JSON for anything else.
import {
  MultiSelect,
  NumberInput,
  Select,
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

/** One property's field: where it is, what it is called, its schema and its value. */
interface FieldProps {
  id: string;
  label: string;
  description: string | undefined;
  required: boolean;
  property: JsonSchema;
  value: unknown;
  onChange: (value: unknown) => void;
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

function ChoiceField({ options, ...field }: FieldProps & { options: string[] }) {
  const { value, onChange } = field;
  return (
    <Select
      id={field.id}
      label={field.label}
      description={field.description}
      required={field.required}
      data={options}
      value={typeof value === 'string' || typeof value === 'number' ? String(value) : null}
      onChange={(next) => onChange(next ?? undefined)}
      clearable={!field.required}
    />
  );
}

function BooleanField(field: FieldProps) {
  return (
    <Switch
      id={field.id}
      label={field.label}
      description={field.description}
      checked={field.value === true}
      onChange={(event) => field.onChange(event.currentTarget.checked)}
    />
  );
}

function NumberField({ property, ...field }: FieldProps) {
  return (
    <NumberInput
      id={field.id}
      label={field.label}
      description={field.description}
      required={field.required}
      min={property.minimum}
      max={property.maximum}
      allowDecimal={typeOf(property) === 'number'}
      value={typeof field.value === 'number' ? field.value : ''}
      onChange={(next) => field.onChange(typeof next === 'number' ? next : undefined)}
    />
  );
}

function StringField({ property, ...field }: FieldProps) {
  const Input = (property.maxLength ?? 0) > 300 ? Textarea : TextInput;
  return (
    <Input
      id={field.id}
      label={field.label}
      description={field.description}
      required={field.required}
      value={typeof field.value === 'string' ? field.value : ''}
      onChange={(event) => field.onChange(event.currentTarget.value)}
    />
  );
}

const asList = (value: unknown) => (Array.isArray(value) ? value.map(String) : []);

function MultiChoiceField({ options, ...field }: FieldProps & { options: string[] }) {
  return (
    <MultiSelect
      id={field.id}
      label={field.label}
      description={field.description}
      data={options}
      value={asList(field.value)}
      onChange={(next) => field.onChange(next.length === 0 ? undefined : next)}
    />
  );
}

function TagsField(field: FieldProps) {
  const { description } = field;
  return (
    <TagsInput
      id={field.id}
      label={field.label}
      description={description ? `${description} (Enter after each)` : 'Enter after each'}
      value={asList(field.value)}
      onChange={(next) => field.onChange(next.length === 0 ? undefined : next)}
    />
  );
}

function JsonField({ label, description, value, onChange, required }: FieldProps) {
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

/** The input a property's schema calls for; nested objects (and lists of them) as JSON. */
export function SchemaField(field: FieldProps) {
  const { property } = field;
  const options = choices(property);
  if (options !== null) return <ChoiceField {...field} options={options} />;
  const type = typeOf(property);
  if (type === 'boolean') return <BooleanField {...field} />;
  if (type === 'integer' || type === 'number') return <NumberField {...field} />;
  if (type === 'string') return <StringField {...field} />;
  if (type === 'array' && property.items !== undefined) {
    const itemChoices = choices(property.items);
    if (itemChoices !== null) return <MultiChoiceField {...field} options={itemChoices} />;
    if (typeOf(property.items) === 'string') return <TagsField {...field} />;
  }
  return <JsonField {...field} />;
}
