// Every value a client sends is bounded by the published schema: strings by length, numbers by
// range, arrays by count. Walks /openapi.json, so a route added without bounds fails here.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allDialects } from '../support/dialects.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

type Schema = Record<string, unknown>;

/** Paths (`POST /v1/x body.a.b`) of unbounded values in a request schema. */
function unbounded(
  schema: unknown,
  where: string,
  found: string[],
  seen = new Set<unknown>(),
): void {
  if (typeof schema !== 'object' || schema === null || seen.has(schema)) return;
  seen.add(schema);
  const node = schema as Schema;
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
    const options = node[key];
    if (Array.isArray(options)) options.forEach((option) => unbounded(option, where, found, seen));
  }
  const type = node.type;
  const types = Array.isArray(type) ? type : [type];
  const fixed = 'const' in node || 'enum' in node;
  if (
    types.includes('string') &&
    !fixed &&
    node.maxLength === undefined &&
    node.format === undefined
  ) {
    found.push(`${where}: string without maxLength`);
  }
  if ((types.includes('integer') || types.includes('number')) && !fixed) {
    if (node.maximum === undefined && node.exclusiveMaximum === undefined) {
      found.push(
        `${where}: ${String(types.find((t) => t === 'integer' || t === 'number'))} without maximum`,
      );
    }
    if (node.minimum === undefined && node.exclusiveMinimum === undefined) {
      found.push(`${where}: number without minimum`);
    }
  }
  if (types.includes('array')) {
    if (node.maxItems === undefined) found.push(`${where}: array without maxItems`);
    unbounded(node.items, `${where}[]`, found, seen);
  }
  if (types.includes('object') || node.properties !== undefined) {
    const properties = (node.properties ?? {}) as Record<string, unknown>;
    for (const [name, property] of Object.entries(properties)) {
      unbounded(property, `${where}.${name}`, found, seen);
    }
    if (typeof node.additionalProperties === 'object') {
      unbounded(node.additionalProperties, `${where}.*`, found, seen);
    }
  }
}

describe.each(allDialects)('request schemas on $name', (dialect) => {
  let harness: TestApp;
  beforeAll(async () => {
    harness = await startTestApp({ dialect });
  });
  afterAll(async () => {
    await harness.close();
  });

  it('bound every string, number and array a client can send', async () => {
    const response = await harness.app.inject({ method: 'GET', url: '/openapi.json' });
    const document = response.json<{
      paths: Record<string, Record<string, Schema>>;
      components?: { schemas?: Record<string, Schema> };
    }>();
    const resolve = (schema: unknown): unknown => {
      if (typeof schema !== 'object' || schema === null) return schema;
      const reference = (schema as Schema).$ref;
      if (typeof reference !== 'string') return schema;
      const name = reference.split('/').pop()!;
      return document.components?.schemas?.[name];
    };
    const found: string[] = [];
    for (const [path, operations] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        const label = `${method.toUpperCase()} ${path}`;
        for (const parameter of (operation.parameters ?? []) as Schema[]) {
          unbounded(
            resolve(parameter.schema),
            `${label} ${String(parameter.in)}.${String(parameter.name)}`,
            found,
          );
        }
        const body = (operation.requestBody as Schema | undefined)?.content as
          | Record<string, { schema: unknown }>
          | undefined;
        for (const media of Object.values(body ?? {})) {
          unbounded(resolve(media.schema), `${label} body`, found);
        }
      }
    }
    expect(found).toEqual([]);
  });

  it('says each sentence of a description once', async () => {
    const response = await harness.app.inject({ method: 'GET', url: '/openapi.json' });
    const doubled: string[] = [];
    const walk = (node: unknown, where: string): void => {
      if (typeof node !== 'object' || node === null) return;
      for (const [key, value] of Object.entries(node)) {
        if ((key === 'description' || key === 'summary') && typeof value === 'string') {
          const seen = new Set<string>();
          for (const sentence of value.split(/(?<=[.!?])\s+/).map((text) => text.trim())) {
            if (sentence.length > 10 && seen.has(sentence)) doubled.push(`${where}: ${sentence}`);
            seen.add(sentence);
          }
        } else walk(value, `${where}/${key}`);
      }
    };
    walk(response.json(), '');
    expect(doubled).toEqual([]);
  });

  it('publishes query parameters that have a default as optional', async () => {
    const response = await harness.app.inject({ method: 'GET', url: '/openapi.json' });
    const document = response.json<{
      paths: Record<string, Record<string, { parameters?: Schema[] }>>;
    }>();
    const wronglyRequired: string[] = [];
    let defaulted = 0;
    for (const [path, operations] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        for (const parameter of operation.parameters ?? []) {
          const schema = parameter.schema as Schema | undefined;
          if (schema?.default === undefined) continue;
          defaulted += 1;
          if (parameter.required === true) {
            wronglyRequired.push(`${method.toUpperCase()} ${path} ${String(parameter.name)}`);
          }
        }
      }
    }
    expect(defaulted).toBeGreaterThan(10);
    expect(wronglyRequired).toEqual([]);
  });
});
