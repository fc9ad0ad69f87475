// A feature module's routes as a Fastify plugin (src/modules/<area>/<area>.routes.ts), registered by
// app.ts from the list the wiring gives it (src/service-container.ts, httpPlugins). Each is
// encapsulated: its schemas, hooks, decorators and content-type parsers stay in its own context,
// while it inherits what app.ts installed on the root before registering it (the request id,
// request log, metrics, CORS, cookies, access control and input-safety hooks, the error and
// not-found handlers, the JSON parser) and the root's strict validator and lazy serializers, which
// every context builds from the factories of the `schemaController` option (src/http/validation.ts).
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync, RawServerDefault } from 'fastify';

export type FeaturePlugin = FastifyPluginAsync<
  Record<never, never>,
  RawServerDefault,
  TypeBoxTypeProvider
>;

/** The context a feature plugin declares its routes in. */
export type FeatureApp = Parameters<FeaturePlugin>[0];

/**
 * `declare` adds the module's schemas, hooks and routes (it may `await app.register(...)` a plugin
 * of its own, or a child context); `name` shows in Fastify's plugin tree.
 */
export function featurePlugin(
  name: string,
  declare: (app: FeatureApp) => void | Promise<void>,
): FeaturePlugin {
  const plugin: FeaturePlugin = async (app) => {
    await declare(app);
  };
  // Fastify's messages and its plugin tree (printPlugins) name a plugin by these.
  Object.defineProperty(plugin, 'name', { value: name });
  return Object.assign(plugin, { [Symbol.for('fastify.display-name')]: name });
}
