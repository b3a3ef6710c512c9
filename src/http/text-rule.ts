/**
 * The control-character rule on every request (issue #21 §5), as one synchronous preValidation
 * hook. Invariant: no field of any route's body, query or path parameters reaches a handler with
 * a NUL or another control character. Tested by test/http/lockout-and-holes.test.ts,
 * test/unit/text.test.ts and test/reliability/fuzz.test.ts.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { addFieldError, ApiErrors, OAuthError, type ErrorTree } from '../core/errors.js';
import { CONTROL_CHARACTER_ERROR, findForbiddenText } from '../core/text.js';
import type { App } from './app-type.js';

/** The OAuth protocol endpoints, which answer in RFC 6749 §5.2 form whatever the method. */
const OAUTH_ROUTES = new Set(['/api/oauth2/token', '/api/oauth2/token/revoke', '/api/v1/oauth2/token', '/api/v1/oauth2/token/revoke']);

/**
 * Applies core/text.ts's rule to every request's parsed body, query and path parameters, before
 * schema validation and before any handler (issue #21 §5): one place, so no field of any route,
 * present or future, can carry a NUL to the database. Refusals are 50035 naming each field under
 * /api (Discord's shape), `invalid_request` at the OAuth endpoints, and a 400 page elsewhere.
 * Raw string bodies (a route's own parser) are left to that route.
 */
export function installTextRule(app: App): void {
  // A callback hook, not an async one: it runs on every request, the webhook hot path included (DESIGN §5).
  app.addHook('preValidation', (request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void) => {
    const inParams = findForbiddenText(request.params);
    const inQuery = findForbiddenText(request.query);
    const inBody = typeof request.body === 'object' ? findForbiddenText(request.body) : [];
    // The common case allocates no combined list.
    if (inParams.length === 0 && inQuery.length === 0 && inBody.length === 0) return done();
    const paths = [...inParams, ...inQuery, ...inBody];
    // By the path, not the matched route: a method the endpoint lacks (OPTIONS) still answers in its form.
    if (OAUTH_ROUTES.has(request.url.split('?', 1)[0] ?? '')) {
      return done(new OAuthError('invalid_request', `${String(paths[0]?.[0] ?? 'a parameter')} must not contain control characters`));
    }
    const tree: ErrorTree = {};
    for (const path of paths) addFieldError(tree, path, CONTROL_CHARACTER_ERROR);
    return done(ApiErrors.invalidFormBody(tree));
  });
}
