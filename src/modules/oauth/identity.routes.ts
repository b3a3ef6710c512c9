import type { App } from '../../http/app-type.js';
import type { Services } from '../../services.js';
import { bearerOf, requireBearer } from './bearer.routes.js';
import { currentUser, describeAuthorization, serversOfBearer } from './identity.service.js';
import { ApiErrorBody, AuthorizationInfoBody, ServerListBody, UserRecordBody } from './oauth.schemas.js';

const bearerErrors = { 401: ApiErrorBody, 403: ApiErrorBody };

/** GET /api/v1/oauth2/@me, /api/v1/users/@me, /api/v1/users/@me/servers (and /guilds). */
export function registerIdentityApi(app: App, services: Services): void {
  app.get(
    '/api/v1/oauth2/@me',
    {
      preHandler: requireBearer(services),
      schema: {
        tags: ['OAuth2'],
        summary: 'The current authorization',
        description: 'SPEC §2.7: the application, the scopes of the presented access token and its expiry; the user with scope identify.',
        security: [{ bearer: [] }],
        response: { 200: AuthorizationInfoBody, ...bearerErrors },
      },
    },
    async (request) => describeAuthorization(services, bearerOf(request)),
  );

  app.get(
    '/api/v1/users/@me',
    {
      preHandler: requireBearer(services, 'identify'),
      schema: {
        tags: ['Users'],
        summary: 'The person who authorized the token',
        description: 'SPEC §2.5: scope identify gives id, username, name and avatarUrl; scope email adds email and verified.',
        security: [{ bearer: [] }],
        response: { 200: UserRecordBody, ...bearerErrors },
      },
    },
    async (request) => currentUser(services, bearerOf(request)),
  );

  for (const url of ['/api/v1/users/@me/servers', '/api/v1/users/@me/guilds']) {
    app.get(
      url,
      {
        preHandler: requireBearer(services, 'servers'),
        schema: {
          ...(url.endsWith('/servers')
            ? {
                tags: ['Users'],
                summary: "The person's servers",
                description: 'SPEC §2.6, scope servers: each server with whether the person owns it and their permissions there. Alias: /api/v1/users/@me/guilds.',
              }
            : { hide: true }),
          security: [{ bearer: [] }],
          response: { 200: ServerListBody, ...bearerErrors },
        },
      },
      async (request) => serversOfBearer(services, bearerOf(request)),
    );
  }
}
