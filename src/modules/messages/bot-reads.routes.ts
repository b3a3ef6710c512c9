import type { App } from '../../http/app-type.js';
import { apiErrorResponses } from '../../http/error.schemas.js';
import type { Services } from '../../deps.js';
import { botActing, botOf, requireBot } from '../applications/bot-auth.routes.js';
import { ChannelResourceBody } from '../resources/resources.schemas.js';
import { RateLimitedBody } from '../webhooks/webhooks.schemas.js';
import { deleteBotMessage, editBotMessage, readBotChannel, readBotHistory, readBotMessage } from './bot-reads.service.js';
import { BotMessageBody, BotReadMessageBody, BotReadMessageListBody, ChannelIdParams, ChannelMessageParams, HistoryQuery } from './dms.schemas.js';

const rateLimitNote = 'Every answer carries X-RateLimit-* headers of the route’s bucket; 429 when it or the bot’s global bucket is empty (docs/bots.md "Rate limits").';
const readRefusals =
  'A channel the bot cannot reach (unknown, of a server it is not in, or a DM it is not part of): 404 10003; a channel of its server that its roles do not let it view (View channel): 403 50001.';

/**
 * What bots read, edit and delete in channels (issue #40 §4) with `Authorization: Bot <token>`:
 * Discord's GET /channels/{id}, GET /channels/{id}/messages, and GET, PATCH and DELETE of
 * /channels/{id}/messages/{id}. Posting is bot-messages.routes.ts.
 */
export function registerBotReadApi(app: App, services: Services): void {
  app.get(
    '/api/v1/channels/:channelId',
    {
      onRequest: requireBot(services),
      schema: {
        tags: ['Messages'],
        summary: 'Get a channel',
        description: `With \`Authorization: Bot <token>\`. Discord's channel object: a server text channel (type 0), or a DM between the bot and a person (type 1, the person as recipient). ${readRefusals} ${rateLimitNote}`,
        security: [{ bot: [] }],
        params: ChannelIdParams,
        response: { 200: ChannelResourceBody, ...apiErrorResponses(401, 403, 404), 429: RateLimitedBody },
      },
    },
    async (request) => readBotChannel(services, botOf(request), request.params.channelId),
  );

  app.get(
    '/api/v1/channels/:channelId/messages',
    {
      onRequest: requireBot(services),
      schema: {
        tags: ['Messages'],
        summary: "Read a channel's messages",
        description: `With \`Authorization: Bot <token>\`. Discord's message objects, newest first: the newest \`limit\` (1–100, default 50), or those right before or after a message id, or around one (that message and the older half, then the newer half). At most one of before, after and around (400 50035). An app’s answer to a command is type 20 with interaction_metadata (who used which command) and the older interaction. Without Read message history the list is empty, as on Discord. ${readRefusals} ${rateLimitNote}`,
        security: [{ bot: [] }],
        params: ChannelIdParams,
        querystring: HistoryQuery,
        response: { 200: BotReadMessageListBody, ...apiErrorResponses(400, 401, 403, 404), 429: RateLimitedBody },
      },
    },
    async (request) => readBotHistory(services, botOf(request), request.params.channelId, request.query),
  );

  app.get(
    '/api/v1/channels/:channelId/messages/:messageId',
    {
      onRequest: requireBot(services),
      schema: {
        tags: ['Messages'],
        summary: 'Get a message',
        description: `With \`Authorization: Bot <token>\`. Discord's message object (type 20 with interaction_metadata when it answers a command). Needs View channel and Read message history (403 50013); a message that is not in this channel: 404 10008. ${readRefusals} ${rateLimitNote}`,
        security: [{ bot: [] }],
        params: ChannelMessageParams,
        response: { 200: BotReadMessageBody, ...apiErrorResponses(401, 403, 404), 429: RateLimitedBody },
      },
    },
    async (request) => readBotMessage(services, botOf(request), request.params.channelId, request.params.messageId),
  );

  app.patch(
    '/api/v1/channels/:channelId/messages/:messageId',
    {
      onRequest: requireBot(services),
      schema: {
        tags: ['Messages'],
        summary: "Edit the bot's message",
        description: `With \`Authorization: Bot <token>\`. The bot's own messages only (403 50005 for anyone else's). content and embeds as for posting; an absent field stays as it is; the edit may not leave the message empty (400 50006); embeds need Embed links in a server (403 50013). 404 10008 for a message not in this channel. ${readRefusals} ${rateLimitNote}`,
        security: [{ bot: [] }],
        params: ChannelMessageParams,
        body: BotMessageBody,
        response: { 200: BotReadMessageBody, ...apiErrorResponses(400, 401, 403, 404), 429: RateLimitedBody },
      },
    },
    async (request) => editBotMessage(services, botActing(request, services.clock), botOf(request), request.params.channelId, request.params.messageId, request.body),
  );

  app.delete(
    '/api/v1/channels/:channelId/messages/:messageId',
    {
      onRequest: requireBot(services),
      schema: {
        tags: ['Messages'],
        summary: 'Delete a message',
        description: `With \`Authorization: Bot <token>\`. The bot's own message, or, in a server, anyone's with Manage messages (403 50013 otherwise; a moderator's delete is in the server's audit log). 204 when deleted; 404 10008 for a message not in this channel. ${readRefusals} ${rateLimitNote}`,
        security: [{ bot: [] }],
        params: ChannelMessageParams,
        response: { 204: { type: 'null', description: 'Deleted' }, ...apiErrorResponses(401, 403, 404), 429: RateLimitedBody },
      },
    },
    async (request, reply) => {
      await deleteBotMessage(services, botActing(request, services.clock), botOf(request), request.params.channelId, request.params.messageId);
      return reply.code(204).send(null);
    },
  );
}
