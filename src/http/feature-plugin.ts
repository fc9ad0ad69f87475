// A feature module's routes as a Fastify plugin (src/modules/<area>/<area>.routes.ts), registered
// by app.ts with `app.register`. Not encapsulated (Fastify's skip-override, what the
// fastify-plugin package sets): the routes join the app's own context, as when app.ts declared
// them itself, under every hook and the app's strict validator. A child context that adds schemas
// would rebuild its validator from Fastify's defaults, which coerce body types, instead of
// inheriting the one app.ts installs with setValidatorCompiler.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync, FastifyPluginCallback, RawServerDefault } from 'fastify';

export type FeaturePlugin = FastifyPluginCallback<
  Record<never, never>,
  RawServerDefault,
  TypeBoxTypeProvider
>;

/** A feature plugin whose declaration awaits (a Fastify plugin of its own, registered first). */
export type AsyncFeaturePlugin = FastifyPluginAsync<
  Record<never, never>,
  RawServerDefault,
  TypeBoxTypeProvider
>;

/** The app a feature plugin declares its routes on. */
export type FeatureApp = Parameters<FeaturePlugin>[0];

/** `declare` adds the module's schemas and routes; `name` shows in Fastify's plugin tree. */
export function featurePlugin(name: string, declare: (app: FeatureApp) => void): FeaturePlugin {
  const plugin: FeaturePlugin = (app, _options, done) => {
    declare(app);
    done();
  };
  return Object.assign(plugin, {
    [Symbol.for('skip-override')]: true,
    [Symbol.for('fastify.display-name')]: name,
  });
}

/** `featurePlugin` for a declaration that awaits: `declare` may `await app.register(...)`. */
export function asyncFeaturePlugin(
  name: string,
  declare: (app: FeatureApp) => Promise<void>,
): AsyncFeaturePlugin {
  const plugin: AsyncFeaturePlugin = (app) => declare(app);
  return Object.assign(plugin, {
    [Symbol.for('skip-override')]: true,
    [Symbol.for('fastify.display-name')]: name,
  });
}
