// The one way the service builds a JSON Schema validator: Ajv with the standard formats, defaults
// filled in, unknown keywords tolerated (TypeBox adds its own), type coercion only when asked, the
// first error only unless every one is asked for (the configuration reports them all), and string
// lengths counted in UTF-16 code units.
import { Ajv, type Options } from 'ajv';
import addFormatsModule from 'ajv-formats';

const addFormats = addFormatsModule.default;

export function createAjv(
  options: Pick<Options, 'coerceTypes' | 'allErrors' | 'verbose'> = {},
): Ajv {
  const ajv = new Ajv({
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
  });
  addFormats(ajv);
  return ajv;
}
