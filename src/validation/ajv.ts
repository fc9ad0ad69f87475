// The one way the service builds a JSON Schema validator: Ajv with the standard formats, defaults
// filled in, unknown keywords tolerated (TypeBox adds its own), type coercion only when asked, the
// first error only unless every one is asked for (the configuration reports them all), and string
// lengths counted in UTF-16 code units.
//
// Every schema is still checked against the meta-schema before it is added or compiled, but by one
// checker per process (per error mode) rather than by each instance: Ajv compiles its meta-schema
// once per instance, about 20 ms of the loop each, and the service builds fifteen instances at
// start (two per set of a context's shared schemas, one for the configuration), which was a fifth
// of its start-up's CPU time.
import { Ajv, type AnySchema, type Options } from 'ajv';
import addFormatsModule from 'ajv-formats';

const addFormats = addFormatsModule.default;

type AjvChoices = Pick<Options, 'coerceTypes' | 'allErrors' | 'verbose'>;

function ajvOptions(options: AjvChoices): Options {
  return {
    allErrors: false,
    removeAdditional: false,
    useDefaults: true,
    strict: false,
    coerceTypes: false,
    // String lengths in UTF-16 code units (JavaScript's .length, constant time) rather than code
    // points, which Ajv counts one by one: a 5 MiB string took tens of milliseconds of the loop.
    // Ajv 8 still honours the option and warns that it is deprecated: that one warning is dropped.
    unicode: false,
    logger: {
      log: console.log.bind(console),
      warn: (...args: unknown[]) => {
        if (!String(args[0]).startsWith('DEPRECATED: option unicode')) console.warn(...args);
      },
      error: console.error.bind(console),
    },
    ...options,
  };
}

/**
 * The meta-schema checkers, one for the first error and one for every error (the options Ajv
 * checks a schema with are its instance's but for coercion and defaults, which it ignores there).
 */
const checkers = new Map<boolean, Ajv>();

function checkerFor(allErrors: boolean): Ajv {
  let checker = checkers.get(allErrors);
  if (checker === undefined) {
    checker = new Ajv(ajvOptions({ allErrors }));
    addFormats(checker);
    checkers.set(allErrors, checker);
  }
  return checker;
}

/** An Ajv that checks schemas with the process's checker instead of compiling a meta-schema. */
class SharedMetaSchemaAjv extends Ajv {
  override validateSchema(schema: AnySchema, throwOrLogError?: boolean): boolean {
    const checker = checkerFor(this.opts.allErrors === true);
    // Throws "schema is invalid: …" as this instance would (the checker's own message).
    const valid = checker.validateSchema(schema, throwOrLogError) as boolean;
    this.errors = checker.errors;
    return valid;
  }
}

export function createAjv(options: AjvChoices = {}): Ajv {
  const ajv = new SharedMetaSchemaAjv(ajvOptions(options));
  addFormats(ajv);
  return ajv;
}
