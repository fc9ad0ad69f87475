// OpenAI's published JSON schemas (openai/openai-openapi, MIT): the subset the suites use, vendored
// in test/fixtures/openai/ (its README gives the source, the licence and how to refresh it), and
// compiled with Ajv's 2020-12 build, so tests can hold every response of the OpenAI-compatible API
// to the letter of OpenAI's document: chat completions, models and errors (openAISchemas()), and
// the Responses API and audio endpoints (openAISchemas('responses-audio')).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { repositoryRoot } from './process.js';

/** The vendored documents, both OpenAPI components of OpenAI's document, compiled alike. */
const documents = {
  chat: 'openai-chat-completions.schemas.json',
  'responses-audio': 'openai-responses-audio.schemas.json',
} as const;

export type OpenAIDocument = keyof typeof documents;

/** The vendored document: the subset of OpenAI's that the suites use (test/fixtures/openai/). */
export function openAISchemasPath(document: OpenAIDocument = 'chat'): string {
  return path.join(repositoryRoot, 'test', 'fixtures', 'openai', documents[document]);
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/**
 * OpenAI's document is OpenAPI 3.1, yet 21 of its schemas still say `nullable: true` (OpenAPI
 * 3.0), a keyword JSON Schema 2020-12 does not have: left alone, Ajv would reject it as unknown (or
 * ignore it without strict mode) and a chunk's `"finish_reason": null` would fail where OpenAI
 * means it to pass. Each such schema becomes the 2020-12 union OpenAI intends: `type: T` becomes
 * `type: [T, "null"]` (with `null` added to an `enum`), and a schema without `type` (a `$ref`)
 * becomes `anyOf: [itself, {type: "null"}]`.
 */
export function nullableToUnions(schema: Json): Json {
  if (Array.isArray(schema)) return schema.map(nullableToUnions);
  if (schema === null || typeof schema !== 'object') return schema;
  const converted: { [key: string]: Json } = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key !== 'nullable') converted[key] = nullableToUnions(value);
  }
  if (schema.nullable !== true) return converted;
  const type = converted.type;
  if (typeof type === 'string' || Array.isArray(type)) {
    const types = Array.isArray(type) ? type : [type];
    converted.type = types.includes('null') ? types : [...types, 'null'];
    const values = converted.enum;
    if (Array.isArray(values) && !values.includes(null)) converted.enum = [...values, null];
    return converted;
  }
  const { description, ...rest } = converted;
  return {
    ...(description === undefined ? {} : { description }),
    anyOf: [rest, { type: 'null' }],
  };
}

/** Keywords of the document that are OpenAPI or vendor annotations, not validation. */
function annotationKeywords(schema: Json, found = new Set<string>()): Set<string> {
  if (Array.isArray(schema)) schema.forEach((item) => annotationKeywords(item, found));
  else if (schema !== null && typeof schema === 'object') {
    for (const [key, value] of Object.entries(schema)) {
      if (key.startsWith('x-') || key === 'example' || key === 'discriminator') found.add(key);
      // Property names are data, not keywords.
      if (key === 'properties' && value !== null && typeof value === 'object') {
        Object.values(value).forEach((property) => annotationKeywords(property, found));
      } else annotationKeywords(value, found);
    }
  }
  return found;
}

export type OpenAISchemaName =
  | 'CreateChatCompletionResponse'
  | 'CreateChatCompletionStreamResponse'
  | 'ListModelsResponse'
  | 'Model'
  | 'ErrorResponse';

/** Schemas of the Responses and audio document (any schema vendored in its fixture compiles). */
export type OpenAIResponsesAudioSchemaName =
  | 'CreateTranscriptionResponseJson'
  | 'CreateTranscriptionResponseVerboseJson'
  | 'Response'
  | 'ResponseStreamEvent'
  | 'ResponseItemList'
  | 'ErrorResponse'
  | (string & Record<never, never>);

interface SchemaNames {
  chat: OpenAISchemaName;
  'responses-audio': OpenAIResponsesAudioSchemaName;
}

export interface OpenAISchemas<Name extends string = OpenAISchemaName> {
  /** The validation errors of `value` against the named schema, as readable lines; [] when valid. */
  problems(name: Name, value: unknown): string[];
  /** The document's version, for messages. */
  version: string;
}

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

function describeErrors(errors: ErrorObject[] | null | undefined): string[] {
  return (errors ?? []).map(
    (error) =>
      `${error.instancePath || '(root)'} ${error.message ?? error.keyword} ${JSON.stringify(error.params)}`,
  );
}

const loaded = new Map<OpenAIDocument, OpenAISchemas<string>>();

/** Keywords of the document that JSON Schema 2020-12 does not have and that validate nothing. */
function foreignKeywords(schema: Json, found = new Set<string>()): Set<string> {
  if (Array.isArray(schema)) schema.forEach((item) => foreignKeywords(item, found));
  else if (schema !== null && typeof schema === 'object') {
    for (const [key, value] of Object.entries(schema)) {
      // `optional: true` (an annotation some properties carry) and 2019-09's recursive references.
      if (key === 'optional' && typeof value === 'boolean') found.add(key);
      if (key === 'properties' && value !== null && typeof value === 'object') {
        Object.values(value).forEach((property) => foreignKeywords(property, found));
      } else foreignKeywords(value, found);
    }
  }
  return found;
}

export function openAISchemas<Document extends OpenAIDocument = 'chat'>(
  which: Document = 'chat' as Document,
): OpenAISchemas<SchemaNames[Document]> {
  const cached = loaded.get(which);
  if (cached !== undefined) return cached;
  const document = JSON.parse(readFileSync(openAISchemasPath(which), 'utf8')) as {
    info: { version: string };
    components: { schemas: Record<string, Json> };
  };
  const components = nullableToUnions(document.components);
  // Strict (unknown keywords and formats are errors), except strictTypes: OpenAI's `Model` uses
  // `required` without `type: "object"`, valid JSON Schema that Ajv's type lint flags.
  // The Responses document also `require`s, in one branch of an `allOf`, properties another branch
  // defines: valid JSON Schema that Ajv's strictRequired lint flags.
  const ajv = new Ajv2020({
    strict: true,
    strictTypes: false,
    strictRequired: which === 'chat',
    allErrors: true,
  });
  addFormats(ajv);
  // OpenAI's own integer format: seconds since the epoch.
  ajv.addFormat('unixtime', {
    type: 'number',
    validate: (value: number) => Number.isSafeInteger(value) && value >= 0,
  });
  // `components` is the OpenAPI document's container of schemas, which the `$ref`s point into.
  ajv.addVocabulary([
    'components',
    ...annotationKeywords(components),
    ...foreignKeywords(components),
  ]);
  ajv.addSchema({ $id: 'openai', components });
  const validators = new Map<string, ValidateFunction>();
  const validator = (name: string): ValidateFunction => {
    let validate = validators.get(name);
    if (validate === undefined) {
      validate = ajv.compile({ $ref: `openai#/components/schemas/${name}` });
      validators.set(name, validate);
    }
    return validate;
  };
  const schemas: OpenAISchemas<string> = {
    version: document.info.version,
    problems(name, value) {
      const validate = validator(name);
      return validate(value) ? [] : describeErrors(validate.errors);
    },
  };
  loaded.set(which, schemas);
  return schemas;
}
