import type { Services } from '../../deps.js';
import type { App } from '../../http/app-type.js';
import { apiErrorResponses } from '../../http/error.schemas.js';
import { botActing, botOf, requireBot } from '../applications/bot-auth.routes.js';
import { GuildChannelListBody, GuildDetailBody, MemberResourceBody, RoleListBody, UserResourceBody } from '../resources/resources.schemas.js';
import { IMAGE_BODY_LIMIT } from '../resources/uploaded-images.js';
import { RateLimitedBody } from '../webhooks/webhooks.schemas.js';
import { GuildIdParams, GuildMemberParams, GuildMfaLevelAnswer, GuildMfaLevelBody, ModifyGuildBody, UserIdParams } from './guilds.schemas.js';
import { transferServer } from './server-transfer.service.js';
import { setServerIcon, setServerMfaLevel } from './servers.service.js';
import { readGuild, readGuildChannels, readGuildMember, readGuildRoles, readUser } from './guilds.service.js';

const security = [{ bot: [] }];
const tags = ['Servers'];
const notMember = 'A server the bot is not in, or none: 404 10004.';
const rateLimitNote = 'Every answer carries X-RateLimit-* headers of the route’s bucket; 429 when it or the bot’s global bucket is empty (docs/bots.md "Rate limits").';
const errors = { ...apiErrorResponses(401, 404), 429: RateLimitedBody };

/**
 * What bots read of their servers and of users (issue #40 §4): Discord's GET /guilds/{id},
 * /guilds/{id}/channels, /guilds/{id}/roles, /guilds/{id}/members/{user_id} and /users/{id},
 * with `Authorization: Bot <token>`; and Discord's POST /guilds/{id}/mfa (issue #38 §4).
 */
export function registerGuildApi(app: App, services: Services): void {
  const onRequest = requireBot(services);

  app.get(
    '/api/v1/guilds/:guildId',
    {
      onRequest,
      schema: {
        tags,
        summary: 'Get a server',
        description: `With \`Authorization: Bot <token>\`. Discord's guild object with its roles; what Gatehouse has no concept of (emojis, stickers, boosts, system channels) carries Discord's neutral values. ${notMember} ${rateLimitNote}`,
        security,
        params: GuildIdParams,
        response: { 200: GuildDetailBody, ...errors },
      },
    },
    async (request) => readGuild(services, botOf(request).botUserId, request.params.guildId),
  );

  app.get(
    '/api/v1/guilds/:guildId/channels',
    {
      onRequest,
      schema: {
        tags,
        summary: "A server's channels",
        description: `With \`Authorization: Bot <token>\`. The text channels the bot can view (Discord's channel objects, type 0): permissions are server-wide, so every channel with View channel, none without it. ${notMember} ${rateLimitNote}`,
        security,
        params: GuildIdParams,
        response: { 200: GuildChannelListBody, ...errors },
      },
    },
    async (request) => readGuildChannels(services, botOf(request).botUserId, request.params.guildId),
  );

  app.get(
    '/api/v1/guilds/:guildId/roles',
    {
      onRequest,
      schema: {
        tags,
        summary: "A server's roles",
        description: `With \`Authorization: Bot <token>\`. Discord's role objects, @everyone (whose id is the server's) included; a bot's own role is managed. ${notMember} ${rateLimitNote}`,
        security,
        params: GuildIdParams,
        response: { 200: RoleListBody, ...errors },
      },
    },
    async (request) => readGuildRoles(services, botOf(request).botUserId, request.params.guildId),
  );

  app.get(
    '/api/v1/guilds/:guildId/members/:userId',
    {
      onRequest,
      schema: {
        tags,
        summary: 'Get a member',
        description: `With \`Authorization: Bot <token>\`. Discord's guild member object: the user, nickname, role ids (@everyone not listed) and when they joined. Someone who is not a member: 404 10007. ${notMember} ${rateLimitNote}`,
        security,
        params: GuildMemberParams,
        response: { 200: MemberResourceBody, ...errors },
      },
    },
    async (request) => readGuildMember(services, botOf(request).botUserId, request.params.guildId, request.params.userId),
  );

  app.post(
    '/api/v1/guilds/:guildId/mfa',
    {
      onRequest,
      schema: {
        tags,
        summary: "Set a server's MFA level",
        description: `With \`Authorization: Bot <token>\`. Discord's Modify Guild MFA Level: \`{ "level": 1 }\` requires a second factor of members who hold moderator permissions, \`0\` lifts it; the answer is the level in force. Only the server's owner may change it (anyone else 403 50013; on Gatehouse a person owns every server, so a bot is always refused), and setting 1 needs the owner's own second factor (400 50035 at \`level\`, as is a level other than 0 or 1). Audited as server.updated. ${notMember} ${rateLimitNote}`,
        security,
        params: GuildIdParams,
        body: GuildMfaLevelBody,
        response: { 200: GuildMfaLevelAnswer, ...apiErrorResponses(400, 401, 403, 404), 429: RateLimitedBody },
      },
    },
    async (request) => {
      // Discord's rule, in one place: servers.service.ts (owner only; 1 needs the owner's second factor).
      await setServerMfaLevel(services, botActing(request, services.clock), request.params.guildId, String(request.body.level));
      return { level: request.body.level };
    },
  );

  app.patch(
    '/api/v1/guilds/:guildId',
    {
      onRequest,
      // Issue #42 §3: room for `icon`, up to 10 MiB of image as base64.
      bodyLimit: Math.max(services.config.bodyLimit, IMAGE_BODY_LIMIT),
      schema: {
        tags,
        summary: 'Transfer a server or change its icon',
        description: `With \`Authorization: Bot <token>\`. Discord's Modify Guild, of which Gatehouse takes \`owner_id\` and \`icon\`. \`owner_id\`: only the server's owner may transfer it (anyone else 403 50013; on Gatehouse a person owns every server, so a bot is always refused: owners transfer from Server settings → Danger zone, the operator with \`gatehouse servers transfer\`). The new owner must be a member and a person (400 50035 at \`owner_id\`). \`icon\` is image data (\`data:image/png;base64,…\`: PNG, JPEG, GIF or WebP, at most 10 MiB; anything else 400 50035 at \`icon\`) stored on Gatehouse and served at \`/icons/{guild_id}/{hash}.png\`, or null to remove it; it needs Manage server (403 50013). Without either field nothing changes and the server is answered. Audited as server.transferred. ${notMember} ${rateLimitNote}`,
        security,
        params: GuildIdParams,
        body: ModifyGuildBody,
        response: { 200: GuildDetailBody, ...apiErrorResponses(400, 401, 403, 404), 429: RateLimitedBody },
      },
    },
    async (request) => {
      const bot = botOf(request);
      const ownerId = request.body.owner_id;
      // The rules are the page's and the CLI's: server-transfer.service.ts.
      if (request.body.icon !== undefined) await setServerIcon(services, botActing(request, services.clock), request.params.guildId, request.body.icon);
      if (ownerId !== undefined) await transferServer(services, botActing(request, services.clock), request.params.guildId, { id: ownerId });
      return readGuild(services, bot.botUserId, request.params.guildId);
    },
  );

  app.get(
    '/api/v1/users/:userId',
    {
      onRequest,
      schema: {
        tags: ['Users'],
        summary: 'Get a user',
        description: `With \`Authorization: Bot <token>\`. Anyone's public user object, as Discord answers bots (never the e-mail address); no such user: 404 10013. /api/v1/users/@me is the bot itself. ${rateLimitNote}`,
        security,
        params: UserIdParams,
        response: { 200: UserResourceBody, ...errors },
      },
    },
    async (request) => readUser(services, request.params.userId),
  );
}
