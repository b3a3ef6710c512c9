import type { App } from '../../http/app-type.js';
import { OAuthError } from '../../core/errors.js';
import { anonymousActing } from '../../http/acting.js';
import type { Services } from '../../deps.js';
import { TOKEN_BODY_LIMIT } from '../../http/body-limits.js';
import { acceptFormBodiesOnly, formOnly, noStore, readParams } from './form-endpoint.hook.js';
import { GRANT_TYPES, TOKEN_PARAMETER_DESCRIPTIONS, TOKEN_PARAMETERS } from './grants/registry.js';
import {
  authorizationServerMetadata,
  INTROSPECT_PATH,
  metadataPaths,
  protectedResourceMetadata,
  protectedResourceMetadataUrl,
  REVOKE_PATH,
  TOKEN_PATH,
} from './metadata.js';
import {
  AuthorizationServerMetadataBody,
  EmptyObject,
  IntrospectRequestBody,
  IntrospectResponseBody,
  OAuthErrorBody,
  ProtectedResourceMetadataBody,
  RevokeRequestBody,
  tokenRequestBody,
  TokenResponseBody,
} from './oauth.schemas.js';
import { REVOKE_PARAMETERS, revokeToken } from './revoke.service.js';
import { INTROSPECT_PARAMETERS, introspectToken } from './introspection.service.js';
import { exchangeToken } from './token.service.js';

/** The versioned aliases Discord libraries call (DESIGN §1). */
const TOKEN_PATHS = [TOKEN_PATH, '/api/v1/oauth2/token'];
const REVOKE_PATHS = [REVOKE_PATH, '/api/v1/oauth2/token/revoke'];

/** POST /api/oauth2/token, /api/oauth2/token/revoke (and /api/v1 aliases), RFC 8414 metadata. */
export function registerTokenApi(app: App, services: Services): void {
  void app.register(async (scope) => {
    const bodyLimit = Math.min(TOKEN_BODY_LIMIT, services.config.bodyLimit);
    acceptFormBodiesOnly(scope, bodyLimit);

    const tokenSchema = {
      consumes: ['application/x-www-form-urlencoded'],
      body: tokenRequestBody(TOKEN_PARAMETER_DESCRIPTIONS),
      response: { 200: TokenResponseBody, 400: OAuthErrorBody, 401: OAuthErrorBody, 429: OAuthErrorBody },
    };
    // The API reference lists the registered grant types as grant_type's enum; the route itself
    // validates without it (oauth.schemas.ts tokenRequestBody says why).
    const documentedBody = tokenRequestBody(TOKEN_PARAMETER_DESCRIPTIONS, GRANT_TYPES);
    for (const url of TOKEN_PATHS) {
      scope.route({
        method: 'POST',
        url,
        bodyLimit,
        ...(url === TOKEN_PATH ? { config: { swaggerTransform: ({ schema }) => ({ schema: { ...schema, body: documentedBody }, url }) } } : {}),
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
          const result = await exchangeToken(services, anonymousActing(request, services.clock), {
            params: readParams(request.body, TOKEN_PARAMETERS),
            authorization: request.headers.authorization,
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
          await revokeToken(services, anonymousActing(request, services.clock), {
            params: readParams(request.body, REVOKE_PARAMETERS),
            authorization: request.headers.authorization,
          });
          // G3: exactly 200, application/json, {} — the one shape every client library accepts.
          return noStore(reply).code(200).send({});
        },
      });
    }

    scope.route({
      method: 'POST',
      url: INTROSPECT_PATH,
      bodyLimit,
      preValidation: formOnly(INTROSPECT_PARAMETERS),
      schema: {
        consumes: ['application/x-www-form-urlencoded'],
        body: IntrospectRequestBody,
        response: { 200: IntrospectResponseBody, 400: OAuthErrorBody, 401: OAuthErrorBody, 429: OAuthErrorBody },
        tags: ['OAuth2'],
        summary: 'Describe an access token to the resource server it is for',
        description:
          `RFC 7662 token introspection. Confidential clients only (HTTP Basic or client_secret_post). A resource server (an application serving resource servers) learns about tokens for its own identifiers; an application about the tokens for this service's API issued to it. Every other token, and any unknown, expired or revoked one, is {"active": false}.`,
      },
      handler: async (request, reply) => {
        const answer = await introspectToken(services, anonymousActing(request, services.clock), {
          params: readParams(request.body, INTROSPECT_PARAMETERS),
          authorization: request.headers.authorization,
        });
        return noStore(reply).send(answer);
      },
    });

    // RFC 6749 §3.2 (D1): only POST.
    for (const url of [...TOKEN_PATHS, ...REVOKE_PATHS, INTROSPECT_PATH]) {
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

  // RFC 9728 (issue #41 §1): Gatehouse's own API as a protected resource, at the URL every bearer 401 names.
  const resource = protectedResourceMetadata(services.config.baseUrl, services.config.serviceName);
  app.get(
    new URL(protectedResourceMetadataUrl(services.config.baseUrl)).pathname,
    {
      schema: {
        tags: ['OAuth2'],
        summary: 'Protected resource metadata (RFC 9728)',
        description: `This service's API as a protected resource: its identifier, authorization server, scopes and how bearer tokens are sent. Every bearer 401 names this document in WWW-Authenticate (resource_metadata).`,
        response: { 200: ProtectedResourceMetadataBody },
      },
    },
    async (_request, reply) => reply.header('Cache-Control', 'public, max-age=3600').header('Access-Control-Allow-Origin', '*').send(resource),
  );

  const metadata = authorizationServerMetadata(services.config.baseUrl, GRANT_TYPES, services.config.clientRegistration !== 'off', services.config.clientIdMetadata);
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
