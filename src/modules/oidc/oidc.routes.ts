import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ANONYMOUS, type Acting, type Who } from '../../core/acting.js';
import { person } from '../../core/actor.js';
import { ApiError, PageError } from '../../core/errors.js';
import { personActing, requestActing } from '../../http/acting.js';
import type { App } from '../../http/app-type.js';
import type { Services } from '../../deps.js';
import { cookieNames, cookieOptions } from '../../web/pages.js';
import { pageContext, sendHtml, signedInPages } from '../../http/pages.js';
import { findApplicationByClientId } from '../applications/applications.service.js';
import { bearerOf, requireBearer } from '../oauth/bearer.routes.js';
import { GRANT_TYPES } from '../oauth/grants/registry.js';
import { apiErrorResponses } from '../../http/error.schemas.js';
import { JWKS_PATH } from '../oauth/metadata.js';
import { discoveryPaths, END_SESSION_PATH, openIdConfiguration, USERINFO_PATH } from './discovery.js';
import { jwks, JWKS_MAX_AGE_S } from './oidc-keys.service.js';
import { endSessionConfirmPage, signedOutPage } from './oidc.page.js';
import { EndSessionConfirmBody, EndSessionQuery, JwksBody, OpenIdConfigurationBody, OpenIdSettingsBody, UserInfoBody } from './oidc.schemas.js';
import { endSession, updateOpenIdClientSettings, userInfo, type EndSessionOutcome } from './oidc.service.js';

function invalidBearerRequest(description: string): ApiError {
  return new ApiError(400, 0, `400: Bad Request: ${description}`, undefined, { 'WWW-Authenticate': `Bearer error="invalid_request", error_description="${description}"` });
}

/**
 * RFC 6750 §2.2 (OpenID conformance: UserInfo by POST with the token in the body): a form-encoded
 * `access_token` without an Authorization header is read as `Bearer <token>`; both at once is a
 * 400 (§2: "MUST NOT use more than one method"). §2.2 allows only application/x-www-form-urlencoded,
 * so a token in any other body (JSON) is refused by name rather than accepted.
 */
async function formBodyToken(request: FastifyRequest): Promise<void> {
  const body = request.body;
  const token = body !== null && typeof body === 'object' ? (body as Record<string, unknown>)['access_token'] : undefined;
  if (token === undefined) return;
  const type = (request.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') throw invalidBearerRequest('access_token in the body must be form-encoded (application/x-www-form-urlencoded); or send it in the Authorization header');
  if (typeof token !== 'string' || request.headers.authorization !== undefined) throw invalidBearerRequest('send the access token once: in the Authorization header or in the form body');
  request.headers.authorization = `Bearer ${token}`;
}

/** Discovery, JWKS and UserInfo (issue #22 §3–§5). */
export function registerOpenIdApi(app: App, services: Services): void {
  const configuration = openIdConfiguration(services.config.baseUrl, GRANT_TYPES, services.config.clientRegistration !== 'off', services.config.clientIdMetadata);
  for (const url of discoveryPaths(services.config.baseUrl)) {
    app.get(
      url,
      {
        schema: {
          tags: ['OpenID Connect'],
          summary: 'OpenID Provider configuration (Discovery 1.0)',
          description: 'Issuer, endpoints, keys and every supported value, consistent with the RFC 8414 document at /.well-known/oauth-authorization-server.',
          response: { 200: OpenIdConfigurationBody },
        },
      },
      async (_request, reply) => reply.header('Cache-Control', 'public, max-age=3600').header('Access-Control-Allow-Origin', '*').send(configuration),
    );
  }

  app.get(
    JWKS_PATH,
    {
      schema: {
        tags: ['OpenID Connect'],
        summary: 'ID token signing keys (RFC 7517 JWK Set)',
        description: 'Every key that signs ID tokens now, every key a rotation added that signs from a few minutes on (published first, so a cached key set always holds the signing key), and retired keys until every token they signed has expired. Keys are identified by kid.',
        response: { 200: JwksBody },
      },
    },
    // Issue #36 §6: a rotated-in key is published NEXT_KEY_LEAD_MS (longer than this) before it signs.
    async (_request, reply) => reply.header('Cache-Control', `public, max-age=${JWKS_MAX_AGE_S}`).header('Access-Control-Allow-Origin', '*').send(await jwks(services)),
  );

  const userInfoSchema = {
    security: [{ bearer: [] }],
    response: { 200: UserInfoBody, ...apiErrorResponses(401, 403) },
  };
  for (const method of ['GET', 'POST'] as const) {
    app.route({
      method,
      url: USERINFO_PATH,
      // Core §5.3.1; RFC 6750 §3: 401 invalid_token and 403 insufficient_scope carry WWW-Authenticate.
      // RFC 6750 §2.2: a POST may carry the token as the form field access_token instead of the header.
      ...(method === 'POST' ? { preValidation: formBodyToken } : {}),
      preHandler: requireBearer(services, 'openid'),
      schema: {
        ...userInfoSchema,
        tags: ['OpenID Connect'],
        summary: method === 'GET' ? 'UserInfo (OpenID Connect Core §5.3)' : 'UserInfo, by POST',
        description: 'Bearer access token with scope openid: sub, plus name, preferred_username and picture with identify, email and email_verified with email.',
      },
      handler: async (request, reply) => reply.header('Cache-Control', 'no-store').send(await userInfo(services, bearerOf(request))),
    });
  }
}

const AppParams = Type.Object({ id: Type.String({ maxLength: 32 }) });

/** The end-session endpoint (RP-Initiated Logout 1.0) and the portal's OpenID settings form (pages context). */
export function registerOpenIdPages(pages: App, services: Services): void {
  const names = cookieNames(services.config.secureCookies);
  const findApp = (id: string) => (/^[0-9]{1,20}$/.test(id) ? findApplicationByClientId(services, id) : Promise.resolve(undefined));

  /** The browser's request acting: its signed-in person, or nobody. */
  function browserActing(request: FastifyRequest): Acting<Who> {
    return requestActing(request, services.clock, request.viewer ? person(request.viewer.id) : ANONYMOUS);
  }

  async function answer(request: FastifyRequest, reply: FastifyReply, outcome: EndSessionOutcome): Promise<FastifyReply> {
    if (outcome.kind === 'confirm') {
      const viewer = request.viewer;
      if (!viewer) throw new PageError(400, 'Sign out', 'Nobody is signed in.');
      return sendHtml(reply.header('Referrer-Policy', 'no-referrer'), endSessionConfirmPage({ ctx: { ...pageContext(request, services), viewer }, applicationName: outcome.applicationName, fields: outcome.fields }));
    }
    if (outcome.kind === 'done') return sendHtml(reply.header('Referrer-Policy', 'no-referrer'), signedOutPage({ ctx: { ...pageContext(request, services), viewer: undefined }, returnTo: outcome.returnTo }));
    reply.clearCookie(names.session, cookieOptions(services));
    if (outcome.location !== undefined) return reply.header('Cache-Control', 'no-store').redirect(outcome.location, 303);
    return sendHtml(reply, signedOutPage({ ctx: { ...pageContext(request, services), viewer: undefined }, returnTo: undefined }));
  }

  function asPage(error: unknown): never {
    // §3: a bad hint or an unregistered URI is shown, never redirected.
    if (error instanceof ApiError) throw new PageError(400, 'This sign-out link is not valid', `${error.message}. If you followed a link from an application, tell its developer.`);
    throw error;
  }

  pages.get(END_SESSION_PATH, { schema: { hide: true, querystring: EndSessionQuery } }, async (request, reply) => {
    const q = request.query;
    const outcome = await endSession(
      services,
      browserActing(request),
      { idTokenHint: q.id_token_hint, clientId: q.client_id, postLogoutRedirectUri: q.post_logout_redirect_uri, state: q.state, sessionToken: request.sessionToken, confirmed: false },
      findApp,
    ).catch(asPage);
    return answer(request, reply, outcome);
  });

  // The confirmation form (CSRF-checked by the pages context).
  pages.post(END_SESSION_PATH, { schema: { hide: true, body: EndSessionConfirmBody } }, async (request, reply) => {
    const b = request.body;
    const outcome = await endSession(
      services,
      browserActing(request),
      { idTokenHint: undefined, clientId: b.client_id, postLogoutRedirectUri: b.post_logout_redirect_uri, state: b.state, sessionToken: request.sessionToken, confirmed: true },
      findApp,
    ).catch(asPage);
    return answer(request, reply, outcome);
  });

  signedInPages(pages, (scope) => {
    scope.post('/developers/applications/:id/openid', { schema: { hide: true, params: AppParams, body: OpenIdSettingsBody } }, async (request, reply) => {
      const appId = request.params.id;
      const uris = request.body.postLogoutRedirectUris === undefined ? undefined : request.body.postLogoutRedirectUris.split(/\r?\n/);
      try {
        await updateOpenIdClientSettings(services, personActing(request, services.clock), appId, { idTokenAlg: request.body.idTokenAlg, postLogoutRedirectUris: uris });
      } catch (error) {
        if (error instanceof ApiError && error.code === 50035) {
          const messages = Object.values(error.errors ?? {}).flatMap((node) => (Array.isArray(node) ? node : ((node as { _errors?: { message: string }[] })._errors ?? []))).map((e) => e.message);
          throw new PageError(400, 'OpenID Connect settings not saved', `${messages.join(' ')} Go back and correct them.`);
        }
        throw error;
      }
      return reply.redirect(`/developers/applications/${appId}?saved=1#openid`, 303);
    });
  });
}
