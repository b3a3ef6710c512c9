import { ApiError, PageError } from '../../core/errors.js';
import type { App } from '../../http/app-type.js';
import { apiErrorResponses } from '../../http/error.schemas.js';
import { RateLimitedBody } from '../webhooks/webhooks.schemas.js';
import type { Services } from '../../deps.js';
import { sendHtml, signedInContext, signedInPages } from '../../http/pages.js';
import { botActing, botOf, requireBot } from '../applications/bot-auth.routes.js';
import { dmConversationPage, dmListPage } from './dms.page.js';
import { ConversationParams, DmChannelBody, OpenDmBody } from './dms.schemas.js';
import { ChannelQuery } from './messages.schemas.js';
import { dmConversations, loadDmConversation, openDm } from './dms.service.js';

/** POST /api/v1/users/@me/channels with bot credentials (SPEC §5.2). */
export function registerDmApi(app: App, services: Services): void {
  app.post(
    '/api/v1/users/@me/channels',
    {
      onRequest: requireBot(services),
      schema: {
        tags: ['Messages'],
        summary: 'Open a direct message with a person',
        description:
          'With `Authorization: Bot <token>`. Opens, or returns the existing, DM channel between the bot and the person `recipientId` (alias `recipient_id`). Allowed only when the person user-installed the bot’s app or shares a server with the bot; otherwise, and for a bot or the bot itself, 403 50007. A missing, malformed or unknown id is 400 50035. Post to it with POST /api/v1/channels/{channelId}/messages.',
        security: [{ bot: [] }],
        body: OpenDmBody,
        response: { 200: DmChannelBody, ...apiErrorResponses(400, 401, 403, 404), 429: RateLimitedBody },
      },
    },
    async (request) => openDm(services, botActing(request, services.clock), botOf(request), request.body),
  );
}

/** The Direct messages pages (pages context: viewer + CSRF). */
export function registerDmPages(pages: App, services: Services): void {
  signedInPages(pages, (scope) => {
    scope.get('/messages', { schema: { hide: true } }, async (request, reply) => {
      const conversations = await dmConversations(services, request.signedInViewer.id);
      return sendHtml(reply, dmListPage({ ctx: signedInContext(request, services), conversations }));
    });

    scope.get('/messages/:channelId', { schema: { hide: true, params: ConversationParams, querystring: ChannelQuery } }, async (request, reply) => {
      const conversation = await loadDmConversation(services, request.signedInViewer.id, request.params.channelId, request.query.before).catch((error: unknown) => {
        // A page of its own words for the service's 404 (http/page-errors.ts would say "Channel").
        if (error instanceof ApiError && error.code === 10003) throw new PageError(404, 'Conversation not found', 'This conversation does not exist, or you are not part of it.');
        throw error;
      });
      return sendHtml(reply, dmConversationPage({ ctx: signedInContext(request, services), conversation, now: services.clock.now() }));
    });
  });
}
