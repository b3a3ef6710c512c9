import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../../http/app-type.js';
import type { Services } from '../../deps.js';
import { botOf, requireBot } from '../applications/bot-auth.routes.js';
import { ApplicationResourceBody } from '../resources/resources.schemas.js';
import { bearerOf, requireBearer } from './bearer.routes.js';
import { botApplication, botUser, currentUserBody, describeAuthorization, serversOfBearer } from './identity.service.js';
import { apiErrorResponses } from '../../http/error.schemas.js';
import { RateLimitedBody } from '../webhooks/webhooks.schemas.js';
import { AuthorizationInfoBody, ServerListBody, UserRecordBody } from './oauth.schemas.js';

const bearerErrors = apiErrorResponses(401, 403);

/** Fastify's JSON type (its CONTENT_TYPE.JSON), set by hand on a body written as a string. */
const JSON_UTF8 = 'application/json; charset=utf-8';

/** `Authorization: Bot …` (scheme case-insensitive), as bot-auth.routes.ts reads it. */
const BOT_SCHEME = /^\s*bot\s/i;

/** A JSON body already written as a string: the route's schema typed the object it describes. */
function sendWritten(reply: FastifyReply, body: string): FastifyReply {
  return reply.type(JSON_UTF8).send(body);
}

function presentsBot(request: FastifyRequest): boolean {
  const header = request.headers.authorization;
  return header !== undefined && BOT_SCHEME.test(header);
}

/** GET /api/v1/oauth2/@me, /api/v1/users/@me, /api/v1/users/@me/servers (and /guilds), /api/v1/applications/@me. */
export function registerIdentityApi(app: App, services: Services): void {
  const identifyBearer = requireBearer(services, 'identify', { withPerson: true });
  const bot = requireBot(services);
  // DESIGN §1: with `Authorization: Bot`, /users/@me is the bot's own user (Discord's answer, and
  // the call REST-only libraries make at start-up); any other credential is an access token.
  const bearerOrBot = async (request: FastifyRequest, reply: FastifyReply) => (presentsBot(request) ? bot.call(app, request, reply) : identifyBearer.call(app, request, reply));

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
      preHandler: bearerOrBot,
      schema: {
        tags: ['Users'],
        summary: 'The person who authorized the token, or the bot',
        description:
          "SPEC §2.5: Discord's user object. Scope identify gives id, username, global_name and avatar (avatar_url: the image's URL); scope email adds email and verified. With `Authorization: Bot <token>`: the bot's own user.",
        security: [{ bearer: [] }, { bot: [] }],
        response: { 200: UserRecordBody, ...bearerErrors, 429: RateLimitedBody },
      },
    },
    // The person's body is written once per person object (identity.service.ts currentUserBody);
    // the type carries the charset Fastify would add, which discord-wire.ts takes off as for every JSON answer.
    async (request, reply) => (request.bot ? botUser(services, botOf(request)) : sendWritten(reply, await currentUserBody(services, bearerOf(request)))),
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
                description: "SPEC §2.6, scope servers (alias guilds): Discord's partial guilds, with whether the person owns each and their permissions there. Alias: /api/v1/users/@me/guilds.",
              }
            : { hide: true }),
          security: [{ bearer: [] }],
          response: { 200: ServerListBody, ...bearerErrors },
        },
      },
      async (request) => serversOfBearer(services, bearerOf(request)),
    );
  }

  for (const url of ['/api/v1/applications/@me', '/api/v1/oauth2/applications/@me']) {
    app.get(
      url,
      {
        onRequest: bot,
        schema: {
          ...(url === '/api/v1/applications/@me'
            ? {
                tags: ['Applications'],
                summary: "The bot's application",
                description: "DESIGN §1: with `Authorization: Bot <token>`, Discord's application object with its owner and bot user. Alias: /api/v1/oauth2/applications/@me.",
              }
            : { hide: true }),
          security: [{ bot: [] }],
          response: { 200: ApplicationResourceBody, ...apiErrorResponses(401), 429: RateLimitedBody },
        },
      },
      async (request) => botApplication(services, botOf(request)),
    );
  }
}
