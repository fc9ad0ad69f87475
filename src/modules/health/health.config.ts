// The spec's features, each on unless the config file switches it off (`features`); the names
// are the feature catalog's, given by the loader.
import Type, { type TBoolean, type TOptional } from 'typebox';
import { Closed } from '../../config/config-kit.js';

export function featuresFileSchema<const Name extends string>(names: readonly Name[]) {
  const switches = Object.fromEntries(names.map((name) => [name, Type.Optional(Type.Boolean())]));
  return Closed(switches as Record<Name, TOptional<TBoolean>>);
}

export function featuresConfig<Name extends string>(
  names: readonly Name[],
  file: Partial<Record<Name, boolean>> = {},
): Record<Name, boolean> {
  return Object.fromEntries(names.map((name) => [name, file[name] ?? true])) as Record<
    Name,
    boolean
  >;
}
