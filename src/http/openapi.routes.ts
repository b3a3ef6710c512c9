import type { FastifyRequest } from 'fastify';
import type { FastifySchema } from 'fastify';
import type { App } from './app-type.js';
import type { OpenApiDocument } from './openapi-document.js';
import { renderApiReference } from './openapi.page.js';
import { sendHtml } from './pages.js';
import { csrfToken } from '../web/csrf.js';

/** Where the generated document and its reference page are served (README, docs/operations.md). */
export const OPENAPI_JSON_PATH = '/api/openapi.json';
export const API_DOCS_PATH = '/api/docs';

/**
 * Which routes the OpenAPI document describes (the `transform` of @fastify/swagger): everything
 * under /api/ and /.well-known/, plus any other route that opts in by declaring `tags` (the OAuth
 * authorize endpoint is a browser page, but app developers need it). Sign-in pages, settings
 * forms and assets stay out. A route is still left out with `schema: { hide: true }`.
 */
export function documentedRoutesOnly({ schema, url }: { schema: FastifySchema | undefined; url: string }): { schema: FastifySchema; url: string } {
  const tags = (schema as { tags?: unknown } | undefined)?.tags;
  const documented = url.startsWith('/api/') || url.startsWith('/.well-known/') || (Array.isArray(tags) && tags.length > 0);
  return { schema: documented ? (schema ?? {}) : { ...schema, hide: true }, url };
}

/**
 * GET /api/openapi.json: the OpenAPI 3.1 document generated from the route schemas, so it cannot
 * drift from what the routes validate. GET /api/docs: the same document as a readable page,
 * rendered on the server (no swagger-ui: the CSP forbids the inline script it needs).
 */
export function registerOpenApiRoutes(app: App, { serviceName, identifyViewer }: { serviceName: string; identifyViewer?: (request: FastifyRequest) => Promise<void> }): void {
  app.get(OPENAPI_JSON_PATH, { schema: { hide: true } }, async (_request, reply) =>
    reply.header('Cache-Control', 'no-cache').header('Access-Control-Allow-Origin', '*').send(app.swagger()),
  );

  // Routes are fixed once the app is ready, so the signed-out page is rendered once, on first
  // request; a signed-in person's carries their header (issue #24), rendered for them.
  let page: string | undefined;
  app.get(API_DOCS_PATH, { schema: { hide: true } }, async (request, reply) => {
    const doc = app.swagger() as unknown as OpenApiDocument;
    if (identifyViewer) await identifyViewer(request).catch(() => undefined);
    if (request.viewer && request.csrfKey) {
      return sendHtml(reply, renderApiReference(doc, { serviceName, documentUrl: OPENAPI_JSON_PATH, viewer: request.viewer, csrfToken: csrfToken(request.csrfKey) }));
    }
    page ??= renderApiReference(doc, { serviceName, documentUrl: OPENAPI_JSON_PATH });
    return sendHtml(reply, page);
  });
}
