import type { App } from '../../http/app-type.js';
import { uploadOf } from '../files/multipart.routes.js';
import { MESSAGE_BODY_LIMIT } from './message-body-limit.js';
import { apiErrorResponses } from '../../http/error.schemas.js';
import type { Services } from '../../deps.js';
import { botActing, botOf, requireBot } from '../applications/bot-auth.routes.js';
import { postBotMessage } from './bot-messages.service.js';
import { BotMessageBody, BotMessageRecordBody, ChannelIdParams } from './dms.schemas.js';

/** POST /api/v1/channels/{channelId}/messages with bot credentials (issue #4 "Bot credentials"). */
export function registerBotMessageApi(app: App, services: Services): void {
  app.post(
    '/api/v1/channels/:channelId/messages',
    {
      onRequest: requireBot(services),
      schema: {
        tags: ['Messages'],
        summary: 'Post a message as the bot',
        description:
          'With `Authorization: Bot <token>`. In a server channel the bot needs View channel and Send messages (and Embed links for embeds, Attach files for files): 403 50013 when missing, 404 10003 for a channel of a server it is not in. In a DM channel (from POST /api/v1/users/@me/channels) it must still be allowed to message the person: 403 50007 otherwise. Content and embeds follow the rules of webhook execute; username and avatarUrl are ignored (a bot always posts as itself).',
        security: [{ bot: [] }],
        params: ChannelIdParams,
        body: { content: { 'application/json': { schema: BotMessageBody }, 'multipart/form-data': { schema: { type: 'null', description: 'files[0..9], payload_json and attachments[], as for webhook execute (docs/files.md)' } } } },
        response: { 200: BotMessageRecordBody, ...apiErrorResponses(400, 401, 403, 404) },
      },
    },
    // Issue #42 §2: multipart/form-data carries files (streamed to the store by the service); its
    // payload is checked by message-payload.ts like a JSON body's.
    async (request) =>
      postBotMessage(services, botActing(request, services.clock), botOf(request), request.params.channelId, request.body, uploadOf(request, services.config.attachmentMaxBytes, MESSAGE_BODY_LIMIT)),
  );
}
