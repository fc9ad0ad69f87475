// The one way the service builds a JSON Schema validator: Ajv with the standard formats, defaults
// filled in, unknown keywords tolerated (TypeBox adds its own), and type coercion only when asked.
import { Ajv, type Options } from 'ajv';
import addFormatsModule from 'ajv-formats';

const addFormats = addFormatsModule.default;

export function createAjv(options: Pick<Options, 'coerceTypes'> = {}): Ajv {
  const ajv = new Ajv({
    allErrors: false,
    removeAdditional: false,
    useDefaults: true,
    strict: false,
    coerceTypes: false,
    ...options,
  });
  addFormats(ajv);
  return ajv;
}
