import type { FastifyError, FastifyReply, FastifyRequest, preValidationAsyncHookHandler } from 'fastify';
import type { App } from '../../http/app-type.js';
import { ApiError, OAuthError, RateLimitedError } from '../../core/errors.js';
import type { Services } from '../../deps.js';
import { UNAVAILABLE_RETRY_AFTER_SECONDS } from '../../http/error-handler.js';
import { isDatabaseUnavailable } from '../../storage/unavailable.js';
import { BodyRefused, FORM_FIELDS_MAX, parseForm, TOKEN_BODY_LIMIT } from '../../http/body-limits.js';
import { authorizationServerMetadata, metadataPaths, REVOKE_PATH, TOKEN_PATH } from './metadata.js';
import { AuthorizationServerMetadataBody, EmptyObject, OAuthErrorBody, RevokeRequestBody, TokenRequestBody, TokenResponseBody } from './oauth.schemas.js';
import { REVOKE_PARAMETERS, revokeToken } from './revoke.service.js';
import { exchangeToken, TOKEN_PARAMETERS } from './token.service.js';

/** The versioned aliases Discord libraries call (DESIGN §1). */
const TOKEN_PATHS = [TOKEN_PATH, '/api/v1/oauth2/token'];
const REVOKE_PATHS = [REVOKE_PATH, '/api/v1/oauth2/token/revoke'];

/** Marks a body in any media type other than form-urlencoded, so the route can answer in OAuth terms. */
const NOT_A_FORM = Symbol('not a form');
type FormBody = Record<string, string | string[]> | typeof NOT_A_FORM | undefined;

/**
 * Refuses what RFC 6749 §3.2 forbids before schema validation runs: a body that is not
 * form-urlencoded (SPEC §4 note; OAUTH-CHECKLIST D2) and a protocol parameter sent twice (§3.2).
 */
function formOnly(parameters: readonly string[]): preValidationAsyncHookHandler {
  return async function formOnly(request) {
    const body = request.body as FormBody;
    if (body === undefined || body === NOT_A_FORM) throw new OAuthError('invalid_request', 'the request body must be application/x-www-form-urlencoded');
    for (const name of parameters) {
      if (Array.isArray(body[name])) throw new OAuthError('invalid_request', `${name} must not be repeated`);
    }
  };
}

/** The protocol parameters as strings; an empty value counts as absent (RFC 6749 §3.2, D12). */
function readParams(body: unknown, parameters: readonly string[]): Record<string, string | undefined> {
  const form = body as Record<string, unknown>;
  const params: Record<string, string | undefined> = {};
  for (const name of parameters) {
    const value = form[name];
    params[name] = typeof value === 'string' && value !== '' ? value : undefined;
  }
  return params;
}

/** RFC 6749 §5.1: token responses are never cached. */
function noStore(reply: FastifyReply): FastifyReply {
  // Lower-case names: every token answer sets these (src/http/security-headers.ts says why).
  return reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
}

/**
 * Anything that goes wrong on these endpoints is answered as an RFC 6749 §5.2 error (E3):
 * Fastify's own 4xx (body too large, bad encoding) become invalid_request, unexpected errors
 * server_error. Rethrowing hands the error to the one error handler, which renders it.
 */
function asOAuthError(raw: unknown, request: FastifyRequest): OAuthError {
  if (raw instanceof OAuthError) return raw;
  if (raw instanceof RateLimitedError) {
    const seconds = Math.max(1, Math.ceil(raw.retryAfterMs / 1000));
    return new OAuthError('temporarily_unavailable', raw.message, 429, { 'Retry-After': String(seconds) });
  }
  const status = raw instanceof ApiError ? raw.status : (raw as FastifyError).statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    if (raw instanceof BodyRefused) return new OAuthError('invalid_request', `the request has more than ${FORM_FIELDS_MAX} parameters`, 400);
    const description = status === 413 ? 'the request body is too large' : 'the request is malformed';
    return new OAuthError('invalid_request', description, status === 413 ? 413 : 400);
  }
  if (isDatabaseUnavailable(raw)) {
    // Issue #7 §4: the database is down, not the request wrong — a retryable 503, never a 500.
    request.log.warn({ code: (raw as { code?: unknown }).code }, 'database unavailable at the token endpoint');
    return new OAuthError('temporarily_unavailable', 'the service cannot reach its database; try again shortly', 503, {
      'Retry-After': String(UNAVAILABLE_RETRY_AFTER_SECONDS),
    });
  }
  request.log.error({ err: raw }, 'unhandled error at the token endpoint');
  return new OAuthError('server_error', 'the server could not complete the request; try again', 500);
}

/** POST /api/oauth2/token, /api/oauth2/token/revoke (and /api/v1 aliases), RFC 8414 metadata. */
export function registerTokenApi(app: App, services: Services): void {
  void app.register(async (scope) => {
    // SPEC §4 note: form-urlencoded only. Every other media type is read (within the body
    // limit) and marked, so the answer is an OAuth invalid_request rather than a 415.
    // Issue #21 §1: a few KiB and a bounded field count, parsed in linear time (a repeated
    // parameter keeps its values for formOnly to refuse), before any client authentication.
    const bodyLimit = Math.min(TOKEN_BODY_LIMIT, services.config.bodyLimit);
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit }, (_request, body, done) => {
      done(null, parseForm(body as string));
    });
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit }, (_request, _body, done) => done(null, NOT_A_FORM));
    scope.setErrorHandler((error, request) => {
      throw asOAuthError(error, request);
    });

    const tokenSchema = {
      consumes: ['application/x-www-form-urlencoded'],
      body: TokenRequestBody,
      response: { 200: TokenResponseBody, 400: OAuthErrorBody, 401: OAuthErrorBody, 429: OAuthErrorBody },
    };
    for (const url of TOKEN_PATHS) {
      scope.route({
        method: 'POST',
        url,
        bodyLimit,
        preValidation: formOnly(TOKEN_PARAMETERS),
        schema:
          url === TOKEN_PATH
            ? {
                ...tokenSchema,
                tags: ['OAuth2'],
                summary: 'Exchange an authorization code, or refresh tokens',
                description:
                  'RFC 6749 token endpoint (SPEC §2.2–2.3). Form-urlencoded only. Client authentication: HTTP Basic, client_id + client_secret in the body, or client_id alone for public apps (PKCE). Refresh tokens rotate on every use. Alias: /api/v1/oauth2/token.',
              }
            : { ...tokenSchema, hide: true },
        handler: async (request, reply) => {
          const result = await exchangeToken(services, {
            params: readParams(request.body, TOKEN_PARAMETERS),
            authorization: request.headers.authorization,
            address: request.ip,
          });
          return noStore(reply).send(result);
        },
      });
    }

    const revokeSchema = {
      consumes: ['application/x-www-form-urlencoded'],
      body: RevokeRequestBody,
      response: { 200: EmptyObject, 400: OAuthErrorBody, 401: OAuthErrorBody, 429: OAuthErrorBody },
    };
    for (const url of REVOKE_PATHS) {
      scope.route({
        method: 'POST',
        url,
        bodyLimit,
        preValidation: formOnly(REVOKE_PARAMETERS),
        schema:
          url === REVOKE_PATH
            ? {
                ...revokeSchema,
                tags: ['OAuth2'],
                summary: 'Revoke a token and end its authorization',
                description:
                  'RFC 7009 (SPEC §2.4). Revoking an access or a refresh token ends the whole authorization: every token of it stops working. Unknown, expired or already revoked tokens also answer 200 {}. Alias: /api/v1/oauth2/token/revoke.',
              }
            : { ...revokeSchema, hide: true },
        handler: async (request, reply) => {
          await revokeToken(services, {
            params: readParams(request.body, REVOKE_PARAMETERS),
            authorization: request.headers.authorization,
            address: request.ip,
          });
          // G3: exactly 200, application/json, {} — the one shape every client library accepts.
          return noStore(reply).code(200).send({});
        },
      });
    }

    // RFC 6749 §3.2 (D1): only POST.
    for (const url of [...TOKEN_PATHS, ...REVOKE_PATHS]) {
      scope.route({
        method: ['GET', 'PUT', 'PATCH', 'DELETE'],
        url,
        schema: { hide: true },
        handler: async () => {
          throw new OAuthError('invalid_request', 'use POST with an application/x-www-form-urlencoded body', 405, { Allow: 'POST' });
        },
      });
    }
  });

  const metadata = authorizationServerMetadata(services.config.baseUrl);
  for (const url of metadataPaths(services.config.baseUrl)) {
    app.get(
      url,
      {
        schema: {
          tags: ['OAuth2'],
          summary: 'Authorization server metadata (RFC 8414)',
          description: 'Endpoints, scopes and capabilities for OAuth client libraries. The issuer is the configured base URL.',
          response: { 200: AuthorizationServerMetadataBody },
        },
      },
      async (_request, reply) => reply.header('Cache-Control', 'public, max-age=3600').header('Access-Control-Allow-Origin', '*').send(metadata),
    );
  }
}
