import type { FastifyReply, FastifyRequest } from 'fastify';
import { AccessError, ApiError, PageError } from '../../core/errors.js';
import type { App } from '../../http/app-type.js';
import { apiErrorResponses } from '../../http/error.schemas.js';
import { RateLimitedBody } from '../webhooks/webhooks.schemas.js';
import type { Services } from '../../deps.js';
import { sendHtml, signedInContext, signedInPages } from '../../http/pages.js';
import { botActing, botOf, requireBot } from '../applications/bot-auth.routes.js';
import { dmConversationPage, dmListPage, type DmComposer } from './dms.page.js';
import { personActing } from '../../http/acting.js';
import { formErrorMessage } from '../../web/components.js';
import { commandsForComposer, invokeCommand } from '../interactions/interactions.service.js';
import { ConversationParams, DmChannelBody, OpenDmBody } from './dms.schemas.js';
import { ChannelQuery, PostMessageBody } from './messages.schemas.js';
import { dmBotOf, dmConversations, loadDmConversation, openDm } from './dms.service.js';

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

    /** The conversation page; `composer` adds what a refused command leaves beside the form. */
    async function conversationPage(request: FastifyRequest, reply: FastifyReply, channelId: string, before: string | undefined, composer: Omit<DmComposer, 'commands'> = {}, status = 200) {
      const viewerId = request.signedInViewer.id;
      const conversation = await loadDmConversation(services, viewerId, channelId, before).catch((error: unknown) => {
        // A page of its own words for the service's 404 (http/page-errors.ts would say "Channel").
        if (error instanceof ApiError && error.code === 10003) throw new PageError(404, 'Conversation not found', 'This conversation does not exist, or you are not part of it.');
        throw error;
      });
      // Issue #40 §2: the commands of the bot's app when the person user-installed it.
      const commands = await commandsForComposer(services, { id: conversation.channelId, serverId: null }, viewerId, undefined);
      return sendHtml(reply, dmConversationPage({ ctx: signedInContext(request, services), conversation, now: services.clock.now(), composer: { ...composer, commands } }), status);
    }

    scope.get('/messages/:channelId', { schema: { hide: true, params: ConversationParams, querystring: ChannelQuery } }, async (request, reply) => {
      return conversationPage(request, reply, request.params.channelId, request.query.before);
    });

    // Issue #40 §2: a command of the bot's app, user-installed by the person; anything else is refused
    // (400) beside the form, as bots receive no messages.
    scope.post('/messages/:channelId', { schema: { hide: true, params: ConversationParams, body: PostMessageBody } }, async (request, reply) => {
      const channelId = request.params.channelId;
      const content = request.body.content ?? '';
      try {
        const invoked = await invokeCommand(services, personActing(request, services.clock), channelId, content);
        if (invoked === undefined) {
          const bot = await dmBotOf(services, channelId, request.signedInViewer.id);
          const error = bot ? `${bot.name} is an app’s bot: it receives commands here, not messages.` : 'Replies are not available in direct messages.';
          return conversationPage(request, reply, channelId, undefined, { error, content }, 400);
        }
        if (invoked.kind === 'failed') return conversationPage(request, reply, channelId, undefined, { error: invoked.sentence, content });
      } catch (error) {
        if (!(error instanceof ApiError) || error instanceof AccessError || error.status >= 500) throw error;
        if (error.code === 10003) return conversationPage(request, reply, channelId, undefined);
        return conversationPage(request, reply, channelId, undefined, { error: formErrorMessage(error), content }, error.status);
      }
      return reply.redirect(`/messages/${channelId}#reply`, 303);
    });
  });
}
