// Serves the built dashboard: index.html with a strict Content Security Policy (a fresh nonce per
// response), hashed assets cached for a year, and the app's own routes falling back to index.html.
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { access } from '../auth/scopes.js';
import { AppError } from '../errors/app-error.js';
import { featurePlugin, type FeatureApp, type FeaturePlugin } from './feature-plugin.js';

/** The placeholder Vite writes into index.html where each response's nonce goes (vite.config.ts). */
export const cspNoncePlaceholder = '__CSP_NONCE__';

/** Paths that belong to the API: they keep their JSON 404 and never fall back to the app. */
const apiPrefixes = [
  '/v1/',
  '/v1',
  '/models',
  '/chat',
  '/embeddings',
  '/openapi.json',
  '/asyncapi.json',
  '/docs',
  '/metrics',
  '/mcp',
  '/assets/',
];

export function contentSecurityPolicy(nonce: string, request: FastifyRequest): string {
  const socketOrigin = `${request.protocol === 'https' ? 'wss' : 'ws'}://${request.host}`;
  return [
    "default-src 'self'",
    `script-src 'self' 'nonce-${nonce}'`,
    `style-src 'self' 'nonce-${nonce}'`,
    "img-src 'self' data: blob:",
    "font-src 'self'",
    `connect-src 'self' ${socketOrigin}`,
    "media-src 'self' blob:",
    "worker-src 'self' blob:",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

export interface WebApp {
  /** The dashboard's routes (its page, hashed assets and top-level files), as a plugin. */
  readonly plugin: FeaturePlugin;
  /** Whether a not-found GET should be answered with the app (one of its client-side routes). */
  isAppRoute(request: FastifyRequest): boolean;
  sendIndex(request: FastifyRequest, reply: FastifyReply): FastifyReply;
}

/** index.html with a fresh nonce, or a 503 saying how to build the dashboard when it is not built. */
function indexSender(directory: string) {
  const indexFile = path.join(directory, 'index.html');
  const built = existsSync(indexFile);
  const template = built ? readFileSync(indexFile, 'utf8') : '';
  const sendIndex = (request: FastifyRequest, reply: FastifyReply): FastifyReply => {
    if (!built) {
      throw new AppError(
        'service_unavailable',
        `The dashboard is not built: ${indexFile} is missing. Build it with 'npm run build' (npm start does it first), or point WEB_APP_DIR at a built copy.`,
      );
    }
    const nonce = randomBytes(16).toString('base64');
    return reply
      .header('content-security-policy', contentSecurityPolicy(nonce, request))
      .header('cache-control', 'no-cache')
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'same-origin')
      .type('text/html; charset=utf-8')
      .send(template.replaceAll(cspNoncePlaceholder, nonce));
  };
  return { built, sendIndex };
}

const hidden = { hide: true };

/** GET /assets/*: the build's hashed assets, cached for a year (their names change with them). */
function assetRoutes(app: FeatureApp, directory: string, index: ReturnType<typeof indexSender>) {
  // The build does not change while it is served: its asset names are known once.
  const assetsDirectory = path.join(directory, 'assets');
  const assetNames = new Set(
    index.built && existsSync(assetsDirectory) ? readdirSync(assetsDirectory) : [],
  );
  app.get(
    '/assets/*',
    { config: { access: access.public() }, schema: hidden },
    (request, reply) => {
      const file = (request.params as { '*': string })['*'];
      if (!index.built) return index.sendIndex(request, reply);
      if (!assetNames.has(file)) {
        throw new AppError(
          'not_found',
          `No asset ${file}: the page may come from an older build; reload it.`,
        );
      }
      void reply.header('x-content-type-options', 'nosniff');
      // Asset names carry a hash of their content, so a cached copy can never be stale.
      return reply.sendFile(path.posix.join('assets', file), {
        cacheControl: true,
        maxAge: 365 * 86_400_000,
        immutable: true,
      });
    },
  );
}

/** Unhashed files at the top of the build (the icon): cached briefly, since their names never change. */
function topLevelFileRoutes(app: FeatureApp, directory: string): void {
  for (const name of readdirSync(directory)) {
    if (name === 'index.html' || /\.(br|gz)$/.test(name)) continue;
    if (!statSync(path.join(directory, name)).isFile()) continue;
    app.get(
      `/${name}`,
      { config: { access: access.public() }, schema: hidden },
      (_request, reply) => reply.sendFile(name, { maxAge: 3_600_000, cacheControl: true }),
    );
  }
}

/** The dashboard built into `directory` (or a 503 naming the fix when it is not built). */
export function webApp(directory: string): WebApp {
  const index = indexSender(directory);
  const plugin = featurePlugin('web-app', async (app) => {
    await app.register(fastifyStatic, {
      root: index.built ? directory : process.cwd(),
      serve: false,
      // `npm run build` writes .br and .gz next to each asset; they are sent when the client accepts them.
      preCompressed: true,
    });
    app.get('/', { config: { access: access.public() }, schema: hidden }, index.sendIndex);
    assetRoutes(app, directory, index);
    if (index.built) topLevelFileRoutes(app, directory);
  });
  return {
    plugin,
    isAppRoute(request) {
      if (request.method !== 'GET' && request.method !== 'HEAD') return false;
      const pathname = request.url.split('?')[0] ?? '/';
      if (apiPrefixes.some((prefix) => pathname === prefix || pathname.startsWith(prefix))) {
        return false;
      }
      const accept = request.headers.accept ?? '';
      return accept.includes('text/html');
    },
    sendIndex: index.sendIndex,
  };
}
