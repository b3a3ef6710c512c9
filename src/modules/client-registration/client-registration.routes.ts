import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { ApiError, OAuthError } from '../../core/errors.js';
import type { Services } from '../../deps.js';
import { anonymousActing } from '../../http/acting.js';
import type { App } from '../../http/app-type.js';
import { REGISTER_PATH } from '../oauth/metadata.js';
import { OAuthErrorBody } from '../oauth/oauth.schemas.js';
import { asOAuthError } from '../oauth/form-endpoint.hook.js';
import { deleteRegistration, readRegistration, registerClient, updateRegistration } from './client-registration.service.js';
import { ClientInformationBody, RegistrationRequestBody } from './client-registration.schemas.js';

/** Client metadata is small: ten redirect URIs of 2048 characters and a few short fields. */
const REGISTRATION_BODY_LIMIT = 64 * 1024;

const ClientParams = Type.Object({ client_id: Type.String({ description: 'The client id registration answered' }) });

/** RFC 7591 §3.1: the metadata is a JSON document; anything else is refused as metadata. */
function jsonBody(request: FastifyRequest): unknown {
  const type = (request.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/json') throw new OAuthError('invalid_client_metadata', 'Send the client metadata as application/json (RFC 7591 §3.1).');
  return request.body;
}

const modes = 'Off unless GATEHOUSE_CLIENT_REGISTRATION is open or token (404 while off); in token mode the request carries an initial access token from `gatehouse apps registration-token` as `Authorization: Bearer …` (401 invalid_token otherwise).';

/** POST /api/oauth2/register and RFC 7592's GET|PUT|DELETE /api/oauth2/register/{client_id} (issue #41 §3). */
export function registerClientRegistrationApi(root: App, services: Services): void {
  root.register(async (app) => {
    // RFC 7591 §3.2.2: every refusal is an OAuth error; Fastify's own 4xx (a body too large or too
    // deeply nested, bad JSON) is metadata that could not be read.
    app.setErrorHandler((error: unknown, request) => {
      // The service's own refusals keep their codes; the endpoint while off is a plain 404.
      if (error instanceof OAuthError || (error instanceof ApiError && error.status === 404)) throw error;
      const refused = asOAuthError(error, request);
      throw refused.error === 'invalid_request' ? new OAuthError('invalid_client_metadata', refused.description, refused.status, refused.headers) : refused;
    });
    registerRoutes(app, services);
  });
}

function registerRoutes(app: App, services: Services): void {
  const bodyLimit = Math.min(REGISTRATION_BODY_LIMIT, services.config.bodyLimit);
  const documented = (url: string) => ({ swaggerTransform: ({ schema }: { schema: object }) => ({ schema: { ...schema, body: RegistrationRequestBody }, url }) });
  const noStore = { 'Cache-Control': 'no-store', Pragma: 'no-cache' };

  app.route({
    method: 'POST',
    url: REGISTER_PATH,
    bodyLimit,
    config: documented(REGISTER_PATH),
    schema: {
      tags: ['OAuth2'],
      summary: 'Register a client (RFC 7591)',
      description: `Dynamic client registration (RFC 7591). ${modes} Refusals: 400 invalid_redirect_uri or invalid_client_metadata with a description; 429 beyond 10 registrations per hour from one address. 201 with the client id, the client secret (confidential clients, shown once), the registration access token and URI (RFC 7592) and the metadata as registered. Registered apps are owned by no person, cannot have a bot, and the consent screen says they were registered automatically.`,
      consumes: ['application/json'],
      response: { 201: ClientInformationBody, 400: OAuthErrorBody, 401: OAuthErrorBody, 404: OAuthErrorBody, 429: OAuthErrorBody },
    },
    handler: async (request, reply) => {
      const information = await registerClient(services, anonymousActing(request, services.clock), { body: jsonBody(request), authorization: request.headers.authorization });
      return reply.code(201).headers(noStore).send(information);
    },
  });

  const clientPath = `${REGISTER_PATH}/:client_id`;
  const rfc7592 = 'With the registration access token as `Authorization: Bearer …`; a missing or wrong token, or a client that did not register itself, is 401 invalid_token.';
  app.route<{ Params: { client_id: string } }>({
    method: 'GET',
    url: clientPath,
    schema: {
      tags: ['OAuth2'],
      summary: 'Read a client registration (RFC 7592)',
      description: `${rfc7592} The client secret is stored hashed and not shown again.`,
      params: ClientParams,
      response: { 200: ClientInformationBody, 401: OAuthErrorBody, 404: OAuthErrorBody },
    },
    handler: async (request, reply) => reply.headers(noStore).send(await readRegistration(services, request.params.client_id, request.headers.authorization)),
  });
  app.route<{ Params: { client_id: string } }>({
    method: 'PUT',
    url: clientPath,
    bodyLimit,
    config: documented(clientPath.replace(':client_id', '{client_id}')),
    schema: {
      tags: ['OAuth2'],
      summary: 'Update a client registration (RFC 7592)',
      description: `${rfc7592} The body replaces the metadata, checked as at registration, and names this client_id; the client type (none or a secret method) cannot change.`,
      consumes: ['application/json'],
      params: ClientParams,
      response: { 200: ClientInformationBody, 400: OAuthErrorBody, 401: OAuthErrorBody, 404: OAuthErrorBody },
    },
    handler: async (request, reply) => {
      const information = await updateRegistration(services, anonymousActing(request, services.clock), request.params.client_id, { body: jsonBody(request), authorization: request.headers.authorization });
      return reply.headers(noStore).send(information);
    },
  });
  app.route<{ Params: { client_id: string } }>({
    method: 'DELETE',
    url: clientPath,
    schema: {
      tags: ['OAuth2'],
      summary: 'Delete a client registration (RFC 7592)',
      description: `${rfc7592} 204: the application and every token it held are gone.`,
      params: ClientParams,
      response: { 204: Type.Null(), 401: OAuthErrorBody, 404: OAuthErrorBody },
    },
    handler: async (request, reply) => {
      await deleteRegistration(services, anonymousActing(request, services.clock), request.params.client_id, request.headers.authorization);
      return reply.code(204).send();
    },
  });
}
