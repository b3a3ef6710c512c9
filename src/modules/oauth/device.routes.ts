import { Type } from '@sinclair/typebox';
import { OAuthError } from '../../core/errors.js';
import type { Services } from '../../deps.js';
import { anonymousActing, personActing } from '../../http/acting.js';
import type { App } from '../../http/app-type.js';
import { TOKEN_BODY_LIMIT } from '../../http/body-limits.js';
import { sendHtml, signedInContext, signedInPages } from '../../http/pages.js';
import { activateAnsweredPage, activateFormPage } from './activate.page.js';
import { consentPage } from './authorize.page.js';
import { grantPageHeaders } from './authorize.routes.js';
import { ACTIVATE_PATH, answerDevice, DEVICE_AUTHORIZATION_PARAMETERS, showDeviceConsent, startDeviceAuthorization, type ActivateOutcome } from './device.service.js';
import { acceptFormBodiesOnly, formOnly, noStore, readParams } from './form-endpoint.hook.js';
import { DEVICE_AUTHORIZATION_PATH } from './metadata.js';
import { DeviceAuthorizationRequestBody, DeviceAuthorizationResponseBody, OAuthErrorBody } from './oauth.schemas.js';

/** The versioned alias Discord libraries' base URL gives (DESIGN §1), as for the token endpoint. */
const DEVICE_AUTHORIZATION_PATHS = [DEVICE_AUTHORIZATION_PATH, '/api/v1/oauth2/device/authorize'];

/** POST /api/oauth2/device/authorize (RFC 8628 §3.1) and its /api/v1 alias. */
export function registerDeviceAuthorizationApi(app: App, services: Services): void {
  void app.register(async (scope) => {
    const bodyLimit = Math.min(TOKEN_BODY_LIMIT, services.config.bodyLimit);
    acceptFormBodiesOnly(scope, bodyLimit);
    const schema = {
      consumes: ['application/x-www-form-urlencoded'],
      body: DeviceAuthorizationRequestBody,
      response: { 200: DeviceAuthorizationResponseBody, 400: OAuthErrorBody, 401: OAuthErrorBody, 429: OAuthErrorBody },
    };
    for (const url of DEVICE_AUTHORIZATION_PATHS) {
      scope.route({
        method: 'POST',
        url,
        bodyLimit,
        preValidation: formOnly(DEVICE_AUTHORIZATION_PARAMETERS),
        schema:
          url === DEVICE_AUTHORIZATION_PATH
            ? {
                ...schema,
                tags: ['OAuth2'],
                summary: 'Start a device authorization (RFC 8628)',
                description:
                  'For devices without a browser: answers a device_code to poll the token endpoint with (grant_type=urn:ietf:params:oauth:grant-type:device_code) and a user_code the person types on verification_uri. Client authentication as at the token endpoint (client_id alone for public apps). Alias: /api/v1/oauth2/device/authorize.',
              }
            : { ...schema, hide: true },
        handler: async (request, reply) => {
          const answer = await startDeviceAuthorization(services, anonymousActing(request, services.clock), {
            params: readParams(request.body, DEVICE_AUTHORIZATION_PARAMETERS),
            authorization: request.headers.authorization,
          });
          return noStore(reply).send(answer);
        },
      });
      // RFC 8628 §3.1: POST only, as the token endpoint.
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
}

/** The code form's query (verification_uri_complete) and body; unknown fields are ignored. */
const ActivateQuery = Type.Object({ user_code: Type.Optional(Type.String({ maxLength: 64 })) });
const ActivateBody = Type.Object({ user_code: Type.Optional(Type.String({ maxLength: 64 })), decision: Type.Optional(Type.String({ maxLength: 16 })) }, { additionalProperties: true });

/**
 * /activate (RFC 8628 §3.3; issue #41 §2), for a signed-in person (a visitor signs in first and
 * comes back, the code kept in the URL): GET shows the code form, or with user_code (the
 * verification_uri_complete) the consent screen at once; POST with the code alone shows the
 * consent screen, with a decision answers it. The pages context checks the CSRF token of every POST.
 */
export function registerActivatePages(pages: App, services: Services): void {
  signedInPages(pages, (signedIn) => {
    const send = (reply: Parameters<typeof grantPageHeaders>[0], request: Parameters<typeof signedInContext>[0], outcome: ActivateOutcome) => {
      const ctx = signedInContext(request, services);
      switch (outcome.kind) {
        case 'form':
          return sendHtml(grantPageHeaders(reply), activateFormPage({ ctx, typed: outcome.typed, message: outcome.message }), outcome.status);
        case 'consent':
          return sendHtml(grantPageHeaders(reply), consentPage({ ctx, view: outcome.view }));
        case 'answered':
          return sendHtml(grantPageHeaders(reply), activateAnsweredPage({ ctx, approved: outcome.approved, applicationName: outcome.applicationName }));
      }
    };

    signedIn.get(ACTIVATE_PATH, { schema: { hide: true, querystring: ActivateQuery } }, async (request, reply) => {
      const typed = request.query.user_code;
      if (typed === undefined || typed.trim() === '') return sendHtml(grantPageHeaders(reply), activateFormPage({ ctx: signedInContext(request, services), typed: '' }));
      return send(reply, request, await showDeviceConsent(services, personActing(request, services.clock), typed));
    });

    signedIn.post(ACTIVATE_PATH, { schema: { hide: true, body: ActivateBody } }, async (request, reply) => {
      const typed = request.body.user_code ?? '';
      const acting = personActing(request, services.clock);
      if (request.body.decision === undefined) return send(reply, request, await showDeviceConsent(services, acting, typed));
      return send(reply, request, await answerDevice(services, acting, { typed, decision: request.body.decision, signedInAt: request.signedInAt, sessionToken: request.sessionToken }));
    });
  });
}
