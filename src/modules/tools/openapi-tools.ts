// An OpenAPI 3.0/3.1 document (JSON, given inline) as a tool source: one tool per operation with an
// operationId, whose arguments are the operation's path, query and header parameters plus `body`
// (its JSON request body). Local `#/components/…` references are expanded with a depth and size
// bound; a cycle is refused when the document is saved. A call builds the request from the base URL
// (default: the document's first server), sends it through the policy fetch, and answers the status
// and the start of the body; 4xx/5xx answer `ok: false`.
import type { FetchFunction } from '../../net/policy-fetch.js';
import { shown } from '../../net/web-fetch-error.js';
import type { ToolOutcome } from './tool.js';
import { brief, cutText, policyFailure, uniqueName } from './tool-text.js';

/** Largest document, as JSON text. */
export const maxDocumentChars = 500 * 1024;
/** Operations one entry may expose (pick some with `operations` in a larger API). */
export const maxOperations = 100;
/** Operations (with an operationId) a document may hold at all. */
const maxDocumentOperations = 2000;
const maxRefDepth = 32;
/** Schema nodes one document's tools may hold once references are expanded. */
const maxExpandedNodes = 50_000;
const maxDescriptionChars = 1024;

const methods = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'] as const;

/** A document problem: `field` is relative to the entry (`document.paths./a.get`, `operations[1]`). */
export class OpenApiDocumentError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
    this.name = 'OpenApiDocumentError';
  }
}

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

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function own(object: Json, key: string): unknown {
  return Object.hasOwn(object, key) ? object[key] : undefined;
}

/** Keywords of a schema whose value is a map of names to schemas. */
const schemaMapKeywords = new Set([
  'properties',
  'patternProperties',
  '$defs',
  'definitions',
  'dependentSchemas',
]);
/** Keywords whose value is a schema (or, for `items`, possibly a list of schemas). */
const schemaKeywords = new Set([
  'items',
  'additionalProperties',
  'additionalItems',
  'unevaluatedProperties',
  'unevaluatedItems',
  'not',
  'contains',
  'propertyNames',
  'if',
  'then',
  'else',
]);
const schemaListKeywords = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems']);
/** OpenAPI annotations a model does not need (and some providers refuse). */
const droppedKeywords = new Set([
  'example',
  'examples',
  'xml',
  'externalDocs',
  'discriminator',
  'deprecated',
  'readOnly',
  'writeOnly',
  'nullable',
  '$schema',
  '$id',
]);

/** Expands local references and converts schemas, bounded in depth, size and cycles. */
class Expander {
  private nodes = 0;

  constructor(private readonly document: Json) {}

  private count(field: string): void {
    this.nodes += 1;
    if (this.nodes > maxExpandedNodes) {
      throw new OpenApiDocumentError(
        field,
        `The document's schemas are too large once their $refs are expanded (more than ${maxExpandedNodes} nodes); pick fewer operations.`,
      );
    }
  }

  /** The object a `$ref` names; `stack` holds the references being expanded (cycles). */
  private target(ref: unknown, field: string, stack: readonly string[]): Json {
    if (typeof ref !== 'string' || !ref.startsWith('#/components/')) {
      throw new OpenApiDocumentError(
        field,
        `$ref '${brief(String(ref), 200)}' is not supported: only references within the document to #/components/… are.`,
      );
    }
    if (stack.includes(ref)) {
      throw new OpenApiDocumentError(
        field,
        `$ref '${brief(ref, 200)}' refers to itself (through ${stack.length - stack.indexOf(ref)} reference(s)); recursive schemas are not supported.`,
      );
    }
    if (stack.length >= maxRefDepth) {
      throw new OpenApiDocumentError(field, `$refs are nested more than ${maxRefDepth} deep.`);
    }
    let current: unknown = this.document;
    for (const raw of ref.slice(2).split('/')) {
      const step = raw.replace(/~1/g, '/').replace(/~0/g, '~');
      current = isObject(current) ? own(current, step) : undefined;
    }
    if (!isObject(current)) {
      throw new OpenApiDocumentError(
        field,
        `$ref '${brief(ref, 200)}' names nothing in the document.`,
      );
    }
    return current;
  }

  /** An object with its `$ref` (if any) replaced by the target, siblings kept over it. */
  resolve(
    value: unknown,
    field: string,
    stack: readonly string[] = [],
  ): { value: unknown; stack: readonly string[] } {
    let current = value;
    let path = stack;
    while (isObject(current) && Object.hasOwn(current, '$ref')) {
      const ref = current.$ref;
      const target = this.target(ref, field, path);
      path = [...path, ref as string];
      const siblings = Object.entries(current).filter(([key]) => key !== '$ref');
      current =
        siblings.length === 0
          ? target
          : Object.fromEntries([...Object.entries(target), ...siblings]);
    }
    return { value: current, stack: path };
  }

  /** A JSON Schema for the model: references expanded, annotations dropped, `nullable` applied. */
  schema(value: unknown, field: string, stack: readonly string[] = []): unknown {
    this.count(field);
    if (typeof value === 'boolean') return value;
    const resolved = this.resolve(value, field, stack);
    const schema = resolved.value;
    if (!isObject(schema)) return {};
    const entries: [string, unknown][] = [];
    for (const [key, child] of Object.entries(schema)) {
      if (droppedKeywords.has(key) || key.startsWith('x-')) continue;
      if (schemaMapKeywords.has(key) && isObject(child)) {
        entries.push([
          key,
          Object.fromEntries(
            Object.entries(child).map(([name, sub]) => [
              name,
              this.schema(sub, field, resolved.stack),
            ]),
          ),
        ]);
      } else if (schemaKeywords.has(key)) {
        entries.push([
          key,
          Array.isArray(child)
            ? child.map((sub) => this.schema(sub, field, resolved.stack))
            : this.schema(child, field, resolved.stack),
        ]);
      } else if (schemaListKeywords.has(key) && Array.isArray(child)) {
        entries.push([key, child.map((sub) => this.schema(sub, field, resolved.stack))]);
      } else {
        entries.push([key, this.data(child, field, 0)]);
      }
    }
    const out = Object.fromEntries(entries);
    // OpenAPI 3.0's `nullable: true` is JSON Schema's `type: [t, 'null']`.
    if (own(schema, 'nullable') === true && typeof out.type === 'string') {
      out.type = [out.type, 'null'];
    }
    return out;
  }

  /** A plain JSON value (enum, default, const…), copied with the same node budget. */
  private data(value: unknown, field: string, depth: number): unknown {
    this.count(field);
    if (depth > maxRefDepth) return null;
    if (Array.isArray(value)) return value.map((item) => this.data(item, field, depth + 1));
    if (isObject(value)) {
      return Object.fromEntries(
        Object.entries(value).map(([key, item]) => [key, this.data(item, field, depth + 1)]),
      );
    }
    return value;
  }
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

function readOperation(
  expander: Expander,
  operationId: string,
  method: (typeof methods)[number],
  path: string,
  operation: Json,
  shared: unknown,
  field: string,
): OpenApiOperation {
  // Operation-level parameters override path-level ones of the same name and place.
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
  const taken = new Set<string>(['body']);
  const properties: [string, unknown][] = [];
  const required: string[] = [];
  const args: OperationArgument[] = [];
  for (const parameter of byKey.values()) {
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
    properties.push([
      property,
      typeof description === 'string' && isObject(schema)
        ? { ...schema, description: brief(description, maxDescriptionChars) }
        : schema,
    ]);
    if (place === 'path' || own(parameter, 'required') === true) required.push(property);
    args.push({ property, name, in: place });
  }
  let hasBody = false;
  const rawBody = own(operation, 'requestBody');
  if (rawBody !== undefined) {
    const body = expander.resolve(rawBody, `${field}.requestBody`).value;
    const content = isObject(body) ? own(body, 'content') : undefined;
    const jsonType = isObject(content) ? Object.keys(content).find(isJsonMediaType) : undefined;
    if (jsonType !== undefined && isObject(content)) {
      const media = own(content, jsonType);
      const schema = isObject(media) ? own(media, 'schema') : undefined;
      properties.push([
        'body',
        schema === undefined ? {} : expander.schema(schema, `${field}.requestBody`),
      ]);
      if (isObject(body) && own(body, 'required') === true) required.push('body');
      hasBody = true;
    } else if (isObject(body) && own(body, 'required') === true) {
      throw new OpenApiDocumentError(
        `${field}.requestBody`,
        `Operation '${brief(operationId, 100)}' requires a request body that is not JSON; only JSON bodies are supported (leave it out with 'operations').`,
      );
    }
  }
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

export interface OpenApiCallContext {
  fetch: FetchFunction;
  baseUrl: string;
  /** Headers sent with every request (the entry's, and `authorization` with a bearer token). */
  headers: Readonly<Record<string, string>>;
  timeoutMs: number;
  maxResultChars: number;
}

function queryValue(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function pathSegment(value: unknown): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  // `.` and `..` would move the request up the path.
  if (text === '.' || text === '..') return text.replace(/\./g, '%2E');
  return encodeURIComponent(text);
}

/** Reads at most `maxBytes` of a body as UTF-8, then stops reading. */
async function boundedText(response: Response, maxBytes: number): Promise<string> {
  if (response.body === null) return '';
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  try {
    while (bytes < maxBytes) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      bytes += value.byteLength;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  return new TextDecoder().decode(Buffer.concat(chunks).subarray(0, maxBytes));
}

/** Runs one operation; resolves `ok: false` on every failure but the signal's. */
export async function callOperation(
  operation: OpenApiOperation,
  args: Record<string, unknown>,
  context: OpenApiCallContext,
  signal: AbortSignal,
): Promise<ToolOutcome> {
  const base = new URL(context.baseUrl);
  let path = operation.path;
  const query = new URLSearchParams();
  const headers = new Headers({ accept: 'application/json, text/*;q=0.9, */*;q=0.5' });
  for (const [name, value] of Object.entries(context.headers)) headers.set(name, value);
  for (const argument of operation.arguments) {
    const value = Object.hasOwn(args, argument.property) ? args[argument.property] : undefined;
    if (value === undefined || value === null) {
      if (argument.in === 'path') {
        return { ok: false, content: `The path parameter '${argument.property}' is required.` };
      }
      continue;
    }
    if (argument.in === 'path') {
      path = path.split(`{${argument.name}}`).join(pathSegment(value));
    } else if (argument.in === 'query') {
      for (const item of Array.isArray(value) ? value : [value])
        query.append(argument.name, queryValue(item));
    } else {
      const text = queryValue(value);
      if (/[\r\n]/.test(text)) {
        return {
          ok: false,
          content: `The header parameter '${argument.property}' may not contain line breaks.`,
        };
      }
      headers.set(argument.name, text);
    }
  }
  const url = new URL(`${base.pathname.replace(/\/+$/, '')}${path}`, base);
  if (url.origin !== base.origin) {
    return { ok: false, content: `The request would leave ${shown(base.origin)}.` };
  }
  const search = query.toString();
  if (search !== '') url.search = search;
  const init: RequestInit = { method: operation.method.toUpperCase(), headers };
  const body = Object.hasOwn(args, 'body') ? args.body : undefined;
  if (operation.hasBody && body !== undefined) {
    headers.set('content-type', 'application/json');
    init.body = JSON.stringify(body);
  }
  const deadline = AbortSignal.timeout(context.timeoutMs);
  init.signal = AbortSignal.any([signal, deadline]);
  try {
    const response = await context.fetch(url, init);
    const text = await boundedText(response, context.maxResultChars * 4 + 4);
    const status = `HTTP ${response.status}${response.statusText === '' ? '' : ` ${response.statusText}`}`;
    const content = cutText(text === '' ? status : `${status}\n${text}`, context.maxResultChars);
    return { ok: response.status < 400, content };
  } catch (error) {
    if (signal.aborted) throw signal.reason;
    if (deadline.aborted) {
      return {
        ok: false,
        content: `${shown(url.origin + url.pathname)} did not answer within ${context.timeoutMs} ms.`,
      };
    }
    const refused = policyFailure(error);
    if (refused !== null) return { ok: false, content: refused.message };
    const message = error instanceof Error ? brief(error.message) : 'it failed';
    return { ok: false, content: `Calling ${shown(url.origin + url.pathname)} failed: ${message}` };
  }
}
