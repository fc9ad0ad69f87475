// An OpenAPI 3.0/3.1 document (JSON, given inline) as a tool source: one tool per operation with an
// operationId, whose arguments are the operation's path, query and header parameters plus `body`
// (its JSON request body). Local `#/components/…` references are expanded with a depth and size
// bound (openapi-expander.ts); a cycle is refused when the document is saved. A call is
// openapi-calls.ts'.
import { Expander, isObject, OpenApiDocumentError, own, type Json } from './openapi-expander.js';
import { brief, uniqueName } from './tool-text.js';

/** Largest document, as JSON text. */
export const maxDocumentChars = 500 * 1024;
/** Operations one entry may expose (pick some with `operations` in a larger API). */
export const maxOperations = 100;
/** Operations (with an operationId) a document may hold at all. */
const maxDocumentOperations = 2000;
const maxDescriptionChars = 1024;

const methods = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'] as const;

type ParameterPlace = 'path' | 'query' | 'header';

/** One argument of an operation: the property the model fills, and where it goes. */
interface OperationArgument {
  property: string;
  name: string;
  in: ParameterPlace;
}

export interface OpenApiOperation {
  operationId: string;
  method: (typeof methods)[number];
  path: string;
  description: string;
  /** The JSON Schema (type object) of the arguments the model gives. */
  parameters: Record<string, unknown>;
  arguments: readonly OperationArgument[];
  /** Whether the operation takes a JSON body (the `body` argument). */
  hasBody: boolean;
}

export interface OpenApiDocumentReading {
  operations: OpenApiOperation[];
  /** The first server's URL with its variables' defaults, when absolute; else null. */
  defaultBaseUrl: string | null;
}

function isJsonMediaType(mediaType: string): boolean {
  const bare = mediaType.split(';')[0]!.trim().toLowerCase();
  return (
    bare === 'application/json' || /^application\/[a-z0-9.+-]*\+json$/.test(bare) || bare === '*/*'
  );
}

/** The first server's absolute URL with its variables' defaults, or null. */
function serverUrl(document: Json): string | null {
  const servers = own(document, 'servers');
  if (!Array.isArray(servers) || !isObject(servers[0])) return null;
  const server = servers[0];
  const raw = own(server, 'url');
  if (typeof raw !== 'string') return null;
  const variables = own(server, 'variables');
  const filled = raw.replace(/\{([^}]+)\}/g, (whole, name: string) => {
    const variable = isObject(variables) ? own(variables, name) : undefined;
    const fallback = isObject(variable) ? own(variable, 'default') : undefined;
    return typeof fallback === 'string' ? fallback : whole;
  });
  if (!/^https?:\/\//i.test(filled) || !URL.canParse(filled)) return null;
  return filled;
}

function checkShape(document: unknown): Json {
  if (!isObject(document))
    throw new OpenApiDocumentError('document', 'The document must be a JSON object.');
  const version = own(document, 'openapi');
  if (typeof version !== 'string' || !/^3\.[01]\./.test(version)) {
    throw new OpenApiDocumentError(
      'document.openapi',
      "The document must be OpenAPI 3.0 or 3.1 ('openapi': '3.0.x' or '3.1.x').",
    );
  }
  if (JSON.stringify(document).length > maxDocumentChars) {
    throw new OpenApiDocumentError(
      'document',
      `The document is larger than ${maxDocumentChars / 1024} KB as JSON; trim it to the operations the agent needs.`,
    );
  }
  if (!isObject(own(document, 'paths'))) {
    throw new OpenApiDocumentError('document.paths', "The document has no 'paths' object.");
  }
  return document;
}

/** Reads a document into its operations (those `only` names, when given); throws OpenApiDocumentError. */
export function readOpenApiDocument(
  document: unknown,
  only?: readonly string[],
): OpenApiDocumentReading {
  const root = checkShape(document);
  const expander = new Expander(root);
  const paths = own(root, 'paths') as Json;
  const wanted = only === undefined ? null : new Set(only);
  const found = new Map<
    string,
    {
      method: (typeof methods)[number];
      path: string;
      operation: Json;
      shared: unknown;
      field: string;
    }
  >();
  let total = 0;
  for (const [path, rawItem] of Object.entries(paths)) {
    const pathField = `document.paths.${path}`;
    const item = expander.resolve(rawItem, pathField).value;
    if (!isObject(item) || !path.startsWith('/')) continue;
    for (const method of methods) {
      const operation = own(item, method);
      if (!isObject(operation)) continue;
      const operationId = own(operation, 'operationId');
      if (typeof operationId !== 'string' || operationId === '') continue;
      total += 1;
      if (total > maxDocumentOperations) {
        throw new OpenApiDocumentError(
          'document',
          `The document has more than ${maxDocumentOperations} operations.`,
        );
      }
      if (found.has(operationId)) {
        throw new OpenApiDocumentError(
          `${pathField}.${method}.operationId`,
          `operationId '${brief(operationId, 100)}' is used twice.`,
        );
      }
      found.set(operationId, {
        method,
        path,
        operation,
        shared: own(item, 'parameters'),
        field: `${pathField}.${method}`,
      });
    }
  }
  if (only !== undefined) {
    only.forEach((name, index) => {
      if (!found.has(name)) {
        throw new OpenApiDocumentError(
          `operations[${index}]`,
          `The document has no operation with operationId '${brief(name, 100)}'.`,
        );
      }
    });
  }
  const chosen = [...found].filter(([id]) => wanted === null || wanted.has(id));
  if (chosen.length === 0) {
    throw new OpenApiDocumentError(
      'document',
      'The document has no operation with an operationId.',
    );
  }
  if (chosen.length > maxOperations) {
    throw new OpenApiDocumentError(
      only === undefined ? 'document' : 'operations',
      `The document has ${chosen.length} operations; a tool source exposes at most ${maxOperations}: list the ones the agent needs in 'operations'.`,
    );
  }
  const operations = chosen.map(([operationId, { method, path, operation, shared, field }]) =>
    readOperation(expander, operationId, method, path, operation, shared, field),
  );
  return { operations, defaultBaseUrl: serverUrl(root) };
}

/** The JSON Schema properties of a tool's arguments, their required names, and where each goes. */
interface ToolInputs {
  readonly properties: [string, unknown][];
  readonly required: string[];
  readonly args: OperationArgument[];
}

function readOperation(
  expander: Expander,
  operationId: string,
  method: (typeof methods)[number],
  path: string,
  operation: Json,
  shared: unknown,
  field: string,
): OpenApiOperation {
  const parameters = parametersOf(expander, operation, shared, field);
  const toolArguments = argumentsOf(expander, parameters, field);
  const hasBody = addBody(expander, operationId, operation, field, toolArguments);
  const { properties, required, args } = toolArguments;
  const summary = own(operation, 'summary');
  const details = own(operation, 'description');
  const description = [summary, details]
    .filter((part): part is string => typeof part === 'string' && part.trim() !== '')
    .join('\n\n');
  return {
    operationId,
    method,
    path,
    description: brief(
      description === '' ? `${method.toUpperCase()} ${path}` : description,
      maxDescriptionChars,
    ),
    parameters: {
      type: 'object',
      properties: Object.fromEntries(properties),
      ...(required.length === 0 ? {} : { required }),
      additionalProperties: false,
    },
    arguments: args,
    hasBody,
  };
}

/**
 * The operation's parameters and its path's: the operation's own override the path's of the same
 * name and place.
 */
function parametersOf(
  expander: Expander,
  operation: Json,
  shared: unknown,
  field: string,
): Iterable<Json> {
  const byKey = new Map<string, Json>();
  const lists = [
    [shared, `${field.slice(0, field.lastIndexOf('.'))}.parameters`],
    [own(operation, 'parameters'), `${field}.parameters`],
  ] as const;
  for (const [list, listField] of lists) {
    if (list === undefined) continue;
    if (!Array.isArray(list))
      throw new OpenApiDocumentError(listField, "'parameters' must be a list.");
    list.forEach((raw, index) => {
      const parameter = expander.resolve(raw, `${listField}[${index}]`).value;
      if (!isObject(parameter)) return;
      const name = own(parameter, 'name');
      const place = own(parameter, 'in');
      if (typeof name !== 'string' || typeof place !== 'string') return;
      byKey.set(`${place}\n${name}`, parameter);
    });
  }
  return byKey.values();
}

/** Each parameter as an argument of the tool, named uniquely (`body` is the request body's). */
function argumentsOf(expander: Expander, parameters: Iterable<Json>, field: string): ToolInputs {
  const taken = new Set<string>(['body']);
  const toolArguments: ToolInputs = { properties: [], required: [], args: [] };
  for (const parameter of parameters) {
    const name = own(parameter, 'name') as string;
    const place = own(parameter, 'in') as string;
    // Cookies are not sent (a tool source's requests carry no cookie jar).
    if (place !== 'path' && place !== 'query' && place !== 'header') continue;
    const property = uniqueName(
      name.replace(/[^a-zA-Z0-9_.-]/g, '_').slice(0, 64) || '_',
      taken,
      64,
    );
    const schemaField = `${field}.parameters`;
    const given = own(parameter, 'schema');
    const schema = (
      given === undefined ? { type: 'string' } : expander.schema(given, schemaField)
    ) as Json;
    const description = own(parameter, 'description');
    toolArguments.properties.push([
      property,
      typeof description === 'string' && isObject(schema)
        ? { ...schema, description: brief(description, maxDescriptionChars) }
        : schema,
    ]);
    if (place === 'path' || own(parameter, 'required') === true) {
      toolArguments.required.push(property);
    }
    toolArguments.args.push({ property, name, in: place });
  }
  return toolArguments;
}

/** The JSON request body as the `body` argument; whether the operation takes one. */
function addBody(
  expander: Expander,
  operationId: string,
  operation: Json,
  field: string,
  toolArguments: ToolInputs,
): boolean {
  const rawBody = own(operation, 'requestBody');
  if (rawBody === undefined) return false;
  const body = expander.resolve(rawBody, `${field}.requestBody`).value;
  const content = isObject(body) ? own(body, 'content') : undefined;
  const jsonType = isObject(content) ? Object.keys(content).find(isJsonMediaType) : undefined;
  if (jsonType !== undefined && isObject(content)) {
    const media = own(content, jsonType);
    const schema = isObject(media) ? own(media, 'schema') : undefined;
    toolArguments.properties.push([
      'body',
      schema === undefined ? {} : expander.schema(schema, `${field}.requestBody`),
    ]);
    if (isObject(body) && own(body, 'required') === true) toolArguments.required.push('body');
    return true;
  }
  if (isObject(body) && own(body, 'required') === true) {
    throw new OpenApiDocumentError(
      `${field}.requestBody`,
      `Operation '${brief(operationId, 100)}' requires a request body that is not JSON; only JSON bodies are supported (leave it out with 'operations').`,
    );
  }
  return false;
}
