// An OpenAPI document's schemas made fit for a model: local `#/components/…` references expanded
// (bounded in depth and in the nodes they make; a cycle refused), annotations a model does not need
// dropped, OpenAPI 3.0's `nullable` written as JSON Schema has it. A problem is an
// OpenApiDocumentError naming where in the entry it is.
import { brief } from './tool-text.js';

const maxRefDepth = 32;
/** Schema nodes one document's tools may hold once references are expanded. */
const maxExpandedNodes = 50_000;

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

export type Json = Record<string, unknown>;

export function isObject(value: unknown): value is Json {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

export function own(object: Json, key: string): unknown {
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
export class Expander {
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
