// JSON Schemas from clients (tool parameters, response_format, agents' answer schemas) turned into
// the subset node-llama-cpp builds sampling grammars from (GbnfJsonSchema). The grammar enforces
// structure: types, properties, items, enums, consts, string lengths, item and property counts.
// Value constraints it cannot express (minimum, pattern, most formats…) are left to the caller;
// structure it cannot express (allOf, not, if/then, recursion outside $defs) is a 400 naming the
// parameter, never a grammar that silently allows something else.
import type { GbnfJsonSchema } from 'node-llama-cpp';
import { InvalidParameterError } from '../../errors/app-error.js';
import {
  annotations,
  anyValue,
  asObject,
  grammarFormats,
  isPlain,
  isPrimitive,
  isSchemaObject,
  jsonTypes,
  keywordsOfType,
  primitiveTypes,
  structuralKeywords,
  unenforced,
  type Schema,
} from './json-schema-keywords.js';

export interface GrammarSchemaOptions {
  /** The request field the schema came from, named in 400s (`tools[0].function.parameters`). */
  readonly param: string;
  /**
   * Prefix for the schema's definitions once hoisted, so several schemas (one per function) can
   * share one grammar without their `$defs` colliding.
   */
  readonly definitionPrefix?: string;
}

export interface GrammarSchema {
  readonly schema: GbnfJsonSchema;
  /** The schema's definitions, renamed with the prefix; to be placed at the grammar's root. */
  readonly definitions: Readonly<Record<string, GbnfJsonSchema>>;
}

/** Translates one schema; `definitions` must end up in the root's `$defs` (see withDefinitions). */
export function toGrammarSchema(schema: unknown, options: GrammarSchemaOptions): GrammarSchema {
  const translator = new Translator(schema, options);
  const translated = translator.translate(schema, '');
  return { schema: translated, definitions: translator.definitions };
}

/** A schema with definitions placed where node-llama-cpp looks for them. */
export function withDefinitions(
  schema: GbnfJsonSchema,
  definitions: Readonly<Record<string, GbnfJsonSchema>>,
): GbnfJsonSchema {
  if (Object.keys(definitions).length === 0) return schema;
  // Any schema may carry $defs in the subset's grammar generator; the type lists only some.
  return { ...schema, $defs: definitions } as GbnfJsonSchema;
}

/** A schema translated on its own, its definitions at its root. */
export function grammarSchemaOf(schema: unknown, param: string): GbnfJsonSchema {
  const { schema: translated, definitions } = toGrammarSchema(schema, { param });
  return withDefinitions(translated, definitions);
}

class Translator {
  readonly definitions: Record<string, GbnfJsonSchema> = {};
  private readonly prefix: string;
  private readonly rootDefinitions: Schema;

  constructor(
    root: unknown,
    private readonly options: GrammarSchemaOptions,
  ) {
    this.prefix = options.definitionPrefix ?? '';
    const defs = isSchemaObject(root)
      ? { ...asObject(root.definitions), ...asObject(root.$defs) }
      : {};
    this.rootDefinitions = defs;
  }

  /** A 400 naming the parameter and where in the schema the problem is. */
  private refuse(at: string, problem: string): never {
    const where = at === '' ? 'the schema' : `'${at}'`;
    throw new InvalidParameterError(
      this.options.param,
      `Local models constrain output with a grammar, which cannot express ${problem} (at ${where} of '${this.options.param}').`,
    );
  }

  translate(schema: unknown, at: string): GbnfJsonSchema {
    const translated = this.translateStructure(schema, at);
    // Descriptions stay: node-llama-cpp shows them to the model when it documents functions.
    const description = isSchemaObject(schema) ? schema.description : undefined;
    return typeof description === 'string' && description !== ''
      ? ({ ...translated, description } as GbnfJsonSchema)
      : translated;
  }

  private translateStructure(schema: unknown, at: string): GbnfJsonSchema {
    if (schema === true) return anyValue;
    if (schema === false) this.refuse(at, 'a schema that allows nothing (false)');
    if (!isSchemaObject(schema)) this.refuse(at, 'a schema that is not an object');

    for (const key of Object.keys(schema)) {
      if (annotations.has(key) || unenforced.has(key) || structuralKeywords.has(key)) continue;
      if (
        [
          'not',
          'if',
          'then',
          'else',
          'dependentRequired',
          'dependentSchemas',
          'dependencies',
        ].includes(key)
      ) {
        this.refuse(at, `'${key}'`);
      }
      // Unknown words (vendor extensions such as x-…) constrain nothing a validator knows of.
    }

    if (schema.$ref !== undefined) return this.reference(schema, at);
    if (schema.allOf !== undefined) {
      const all = schema.allOf;
      if (!Array.isArray(all) || all.length !== 1 || this.hasOtherStructure(schema, ['allOf'])) {
        this.refuse(at, "'allOf' (other than around a single schema)");
      }
      return this.nullable(schema, this.translate(all[0], `${at}/allOf/0`));
    }
    const alternatives = schema.anyOf ?? schema.oneOf;
    if (alternatives !== undefined) {
      const word = schema.anyOf !== undefined ? 'anyOf' : 'oneOf';
      if (!Array.isArray(alternatives) || alternatives.length === 0) {
        this.refuse(at, `an empty or malformed '${word}'`);
      }
      if (schema.anyOf !== undefined && schema.oneOf !== undefined) {
        this.refuse(at, "'anyOf' and 'oneOf' side by side");
      }
      if (this.hasOtherStructure(schema, [word])) {
        this.refuse(at, `'${word}' beside other structural keywords (type, properties…)`);
      }
      // Generating any one alternative satisfies anyOf; for oneOf the grammar cannot rule out
      // output matching two alternatives at once (documented).
      return this.nullable(schema, {
        oneOf: alternatives.map((alternative, index) =>
          this.translate(alternative, `${at}/${word}/${index}`),
        ),
      });
    }
    if (schema.const !== undefined) {
      if (!isPrimitive(schema.const)) this.refuse(at, "a 'const' that is an object or array");
      return this.nullable(schema, { const: schema.const });
    }
    if (schema.enum !== undefined) {
      if (!Array.isArray(schema.enum) || schema.enum.length === 0) {
        this.refuse(at, "an empty or malformed 'enum'");
      }
      if (!schema.enum.every(isPrimitive)) {
        this.refuse(at, "an 'enum' with objects or arrays");
      }
      return this.nullable(schema, { enum: schema.enum });
    }
    return this.nullable(schema, this.typed(schema, at));
  }

  /** OpenAPI's `nullable: true`, as some clients still write it. */
  private nullable(schema: Schema, translated: GbnfJsonSchema): GbnfJsonSchema {
    return schema.nullable === true ? { oneOf: [translated, { type: 'null' }] } : translated;
  }

  private hasOtherStructure(schema: Schema, except: readonly string[]): boolean {
    return Object.keys(schema).some(
      (key) => structuralKeywords.has(key) && key !== 'nullable' && !except.includes(key),
    );
  }

  private reference(schema: Schema, at: string): GbnfJsonSchema {
    const reference = schema.$ref;
    const match =
      typeof reference === 'string' ? /^#\/(?:\$defs|definitions)\/([^/]+)$/.exec(reference) : null;
    if (match === null) {
      this.refuse(
        at,
        `the reference ${JSON.stringify(reference)} (only '#/$defs/…' and '#/definitions/…' are followed)`,
      );
    }
    if (this.hasOtherStructure(schema, ['$ref'])) {
      this.refuse(at, "'$ref' beside other structural keywords");
    }
    const name = decodeURIComponent(match[1]!.replaceAll('~1', '/').replaceAll('~0', '~'));
    const target = this.rootDefinitions[name];
    if (target === undefined)
      this.refuse(at, `the reference ${JSON.stringify(reference)}, which names no definition`);
    const hoisted = `${this.prefix}${name.replace(/[^A-Za-z0-9_-]/g, '_')}`;
    if (!(hoisted in this.definitions)) {
      // Placeholder first: a recursive definition refers to itself while being translated.
      this.definitions[hoisted] = anyValue;
      this.definitions[hoisted] = this.translate(target, `#/$defs/${name}`);
    }
    return this.nullable(schema, { $ref: `#/$defs/${hoisted}` } as GbnfJsonSchema);
  }

  private typed(schema: Schema, at: string): GbnfJsonSchema {
    const declared = schema.type;
    let types: string[];
    if (declared === undefined) {
      // No type: inferred from the words used, else anything.
      types = Object.entries(keywordsOfType)
        .filter(([, words]) => words.some((word) => schema[word] !== undefined))
        .map(([type]) => type);
      if (types.length === 0) return anyValue;
    } else {
      const listed: unknown[] =
        typeof declared === 'string' ? [declared] : Array.isArray(declared) ? declared : [];
      types = listed.filter((type): type is string => typeof type === 'string');
      if (
        types.length === 0 ||
        types.length !== listed.length ||
        !types.every((type) => jsonTypes.has(type))
      ) {
        this.refuse(at, `the type ${JSON.stringify(declared)}`);
      }
    }
    const branches = types.map((type) => this.ofType(type, schema, at));
    if (branches.length === 1) return branches[0]!;
    const plain = types.filter(
      (type, index) =>
        (primitiveTypes as readonly string[]).includes(type) && isPlain(branches[index]!),
    );
    // Bare primitive types stay one `type` list; anything with more to say is its own branch.
    const rest = branches.filter((_, index) => !plain.includes(types[index]!));
    const list: GbnfJsonSchema[] =
      plain.length === 0
        ? rest
        : [
            {
              type:
                plain.length === 1
                  ? (plain[0] as (typeof primitiveTypes)[number])
                  : (plain as (typeof primitiveTypes)[number][]),
            },
            ...rest,
          ];
    return list.length === 1 ? list[0]! : { oneOf: list };
  }

  private ofType(type: string, schema: Schema, at: string): GbnfJsonSchema {
    switch (type) {
      case 'string': {
        if (typeof schema.format === 'string' && grammarFormats.has(schema.format)) {
          return { type: 'string', format: schema.format as 'date-time' | 'date' | 'time' };
        }
        return {
          type: 'string',
          ...count('minLength', schema, at, this),
          ...count('maxLength', schema, at, this),
        };
      }
      case 'object':
        return this.object(schema, at);
      case 'array':
        return this.array(schema, at);
      default:
        return { type: type as (typeof primitiveTypes)[number] };
    }
  }

  private object(schema: Schema, at: string): GbnfJsonSchema {
    const properties: Record<string, GbnfJsonSchema> = {};
    const declared = schema.properties;
    if (declared !== undefined && !isSchemaObject(declared))
      this.refuse(at, "'properties' that is not an object");
    for (const [name, property] of Object.entries(declared ?? {})) {
      properties[name] = this.translate(property, `${at}/properties/${name}`);
    }
    // The grammar writes every listed property; a required one the schema does not describe is
    // written too, with any value, so the answer still has it.
    if (schema.required !== undefined) {
      if (
        !Array.isArray(schema.required) ||
        !schema.required.every((name) => typeof name === 'string')
      ) {
        this.refuse(at, "'required' that is not a list of names");
      }
      for (const name of schema.required) properties[name] ??= anyValue;
    }
    const extra = schema.additionalProperties;
    let additionalProperties: boolean | GbnfJsonSchema;
    if (extra === undefined) {
      // JSON Schema allows other properties by default; the grammar leaves them out when the
      // schema lists some (still valid), and allows any when it lists none (an open object).
      additionalProperties = Object.keys(properties).length === 0;
    } else if (typeof extra === 'boolean') {
      additionalProperties = extra;
    } else {
      additionalProperties = this.translate(extra, `${at}/additionalProperties`);
    }
    return {
      type: 'object',
      properties,
      additionalProperties,
      ...count('minProperties', schema, at, this),
      ...count('maxProperties', schema, at, this),
    };
  }

  private array(schema: Schema, at: string): GbnfJsonSchema {
    let items: GbnfJsonSchema | undefined;
    let prefixItems: GbnfJsonSchema[] | undefined;
    let maxItems = count('maxItems', schema, at, this).maxItems;
    const tuple = (list: unknown[], word: string) =>
      list.map((item, index) => this.translate(item, `${at}/${word}/${index}`));
    if (Array.isArray(schema.items)) {
      // Draft-07 tuples: `items` is the list, `additionalItems` what may follow.
      prefixItems = tuple(schema.items, 'items');
      if (schema.additionalItems === false) maxItems = prefixItems.length;
      else if (schema.additionalItems !== undefined && schema.additionalItems !== true) {
        items = this.translate(schema.additionalItems, `${at}/additionalItems`);
      }
    } else {
      if (schema.prefixItems !== undefined) {
        if (!Array.isArray(schema.prefixItems)) this.refuse(at, "'prefixItems' that is not a list");
        prefixItems = tuple(schema.prefixItems, 'prefixItems');
      }
      if (schema.items === false) maxItems = prefixItems?.length ?? 0;
      else if (schema.items !== undefined && schema.items !== true) {
        items = this.translate(schema.items, `${at}/items`);
      }
    }
    return {
      type: 'array',
      ...(items === undefined ? {} : { items }),
      ...(prefixItems === undefined ? {} : { prefixItems }),
      ...count('minItems', schema, at, this),
      ...(maxItems === undefined ? {} : { maxItems }),
    };
  }

  refuseCount(at: string, word: string): never {
    this.refuse(at, `a '${word}' that is not a non-negative integer`);
  }
}

function count<Word extends string>(
  word: Word,
  schema: Schema,
  at: string,
  translator: Translator,
): { [key in Word]?: number } {
  const value = schema[word];
  if (value === undefined) return {};
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
    translator.refuseCount(at, word);
  }
  return { [word]: value } as { [key in Word]?: number };
}
