import type { FastifyReply, FastifyRequest } from 'fastify';
import { AccessError, ApiError, ApiErrors } from '../../core/errors.js';
import { Permission, has } from '../../core/permissions.js';
import type { App } from '../../http/app-type.js';
import type { Services } from '../../deps.js';
import { personActing } from '../../http/acting.js';
import { formErrorMessage } from '../../web/components.js';
import { pageContext, sendHtml, signedInPages } from '../../http/pages.js';
import type { Channel } from '../directory/channels.js';
import { getChannel } from '../directory/channels.service.js';
import { requireServerPermission } from '../directory/access.service.js';
import { MAX_FILES } from '../files/attachments.js';
import { readableSize } from '../files/files.page.js';
import { uploadOf } from '../files/multipart.routes.js';
import { MESSAGE_BODY_LIMIT } from './message-body-limit.js';
import { wantsJson } from './message-actions.routes.js';
import { messageItem } from './message-list.page.js';
import { channelPage } from './messages.page.js';
import { ChannelParams, ChannelQuery, PostMessageBody, ReadChannelBody } from './messages.schemas.js';
import { loadChannelPage, postFromComposer, postMessage, readChannelUpTo } from './messages.service.js';
import { commandsForComposer, invokeCommand } from '../interactions/interactions.service.js';

const hide = { hide: true } as const;

// The permissions that open some server settings section (directory/policy.ts openSettings).
const MANAGE_ANY = Permission.MANAGE_SERVER | Permission.MANAGE_CHANNELS | Permission.MANAGE_ROLES | Permission.KICK_MEMBERS | Permission.VIEW_AUDIT_LOG;

/** The channel view's renderer and the lookup of its channel, shared by the view and the post. */
function channelView(services: Services) {
  /** A server text channel, or the not-found page (also for DM channels, which have no view yet). */
  async function serverChannel(channelId: string): Promise<Channel & { serverId: string }> {
    const channel = await getChannel(services, channelId);
    if (!channel || channel.serverId === null) throw ApiErrors.unknownChannel();
    return { ...channel, serverId: channel.serverId };
  }

  /** The channel view; loadChannelPage checks that the person may view the channel. */
  async function render(
    request: FastifyRequest,
    reply: FastifyReply,
    channelId: string,
    failed?: { error: string; content: string; status: number },
    before?: string,
  ) {
    const data = await loadChannelPage(services, personActing(request, services.clock), channelId, before);
    const { channel, permissions } = data;
    const markup = channelPage({
      ctx: pageContext(request, services),
      server: data.server,
      servers: data.servers,
      channel,
      channels: data.channels,
      messages: data.messages,
      hasOlder: data.hasOlder,
      unreadChannelIds: data.unreadChannelIds,
      authorColors: data.authorColors,
      ...(data.firstUnreadId ? { firstUnreadId: data.firstUnreadId } : {}),
      ...(before === undefined ? {} : { before }),
      now: services.clock.now(),
      canSend: has(permissions, Permission.SEND_MESSAGES),
      ...(has(permissions, Permission.ATTACH_FILES) ? { attach: { maxBytes: services.config.attachmentMaxBytes, maxFiles: MAX_FILES } } : {}),
      canManage: (permissions & MANAGE_ANY) !== 0n,
      canInvite: has(permissions, Permission.CREATE_INSTANT_INVITE) || has(permissions, Permission.MANAGE_SERVER),
      canManageWebhooks: has(permissions, Permission.MANAGE_WEBHOOKS),
      rights: { viewerId: request.signedInViewer.id, manageMessages: has(permissions, Permission.MANAGE_MESSAGES) },
      ...(failed ? { error: failed.error, content: failed.content } : {}),
      ...(has(permissions, Permission.SEND_MESSAGES)
        ? { commands: await commandsForComposer(services, channel, request.signedInViewer.id, permissions) }
        : {}),
    });
    return sendHtml(reply, markup, failed?.status ?? 200);
  }

  return { serverChannel, render };
}

/** The channel view (pages context: viewer + CSRF). */
export function registerMessagePages(pages: App, services: Services): void {
  const { render } = channelView(services);
  signedInPages(pages, (scope) => {
    scope.get('/channels/:channelId', { schema: { ...hide, params: ChannelParams, querystring: ChannelQuery } }, async (request, reply) => {
      return render(request, reply, request.params.channelId, undefined, request.query.before);
    });

    // The page's script reports what it has shown while open and visible (unread state, issue #24).
    scope.post('/channels/:channelId/read', { schema: { ...hide, params: ChannelParams, body: ReadChannelBody } }, async (request, reply) => {
      await readChannelUpTo(services, personActing(request, services.clock), request.params.channelId, request.body.messageId ?? '');
      return reply.code(204).send();
    });
  });
}

/**
 * Posting from the composer: a small form, or (issue #42 §2) multipart/form-data with files. It
 * lives in a pages context of its own (app.ts) that also has the multipart parser; the session
 * and CSRF hook is the same (a multipart post's token comes in the X-CSRF-Token header or the
 * action URL's `_csrf`, page-context.hook.ts).
 */
export function registerMessagePostPage(pages: App, services: Services): void {
  const { serverChannel, render } = channelView(services);
  signedInPages(pages, (scope) => {
    const body = { content: { 'application/x-www-form-urlencoded': { schema: PostMessageBody }, 'multipart/form-data': { schema: { type: 'null' } } } } as const;
    scope.post('/channels/:channelId/messages', { schema: { ...hide, params: ChannelParams, body } }, async (request, reply) => {
      const viewer = request.signedInViewer;
      const channel = await serverChannel(request.params.channelId);
      // For the answer's own rights (Manage messages); postMessage checks Send messages itself (issue #37 §1).
      const permissions = await requireServerPermission(services, channel.serverId, viewer.id, Permission.VIEW_CHANNEL, ApiErrors.unknownChannel);
      const upload = uploadOf(request, services.config.attachmentMaxBytes, MESSAGE_BODY_LIMIT);
      const rights = { viewerId: viewer.id, manageMessages: has(permissions, Permission.MANAGE_MESSAGES) };
      let content = upload === undefined ? ((request.body as PostMessageBody | undefined)?.content ?? '') : '';
      try {
        if (upload !== undefined) {
          const sent = await postFromComposer(services, personActing(request, services.clock), channel.id, upload, (typed) => (content = typed));
          if (sent.kind === 'posted') {
            if (wantsJson(request)) return reply.code(201).send({ id: sent.message.id, html: messageItem(sent.message, { rights }).value });
            return reply.redirect(`/channels/${channel.id}#post`, 303);
          }
          content = sent.content;
        }
        // Issue #40 §2: `/name option:value` where an app's command `name` is reachable runs it instead of posting text.
        const invoked = await invokeCommand(services, personActing(request, services.clock), channel.id, content, { channel, permissions });
        if (invoked?.kind === 'failed') return render(request, reply, channel.id, { error: invoked.sentence, content, status: 200 });
        // Issue #40 §2: an ephemeral answer is on the channel view for the invoker alone (the redirect shows it).
        if (invoked?.kind === 'ephemeral') return reply.redirect(`/channels/${channel.id}#post`, 303);
        const posted = invoked?.kind === 'posted' ? invoked.message : await postMessage(services, personActing(request, services.clock), channel.id, content);
        // composer.js: the new message in the answer; the live stream may bring it too (same id, replaced).
        if (wantsJson(request)) return reply.code(201).send({ id: posted.id, html: messageItem(posted, { rights }).value });
      } catch (error) {
        if (!(error instanceof ApiError) || error.status >= 500) throw error;
        // composer.js sends files once and shows why they were refused (it never posts them again):
        // Discord's error body, and the sentence the form would show.
        const sentence = upload !== undefined && error.code === 40005 ? `Files can be at most ${readableSize(services.config.attachmentMaxBytes)} in all per message. Nothing was sent.` : formErrorMessage(error);
        if (upload !== undefined && wantsJson(request)) return reply.code(error.status).send({ code: error.code, message: error.message, ...(error.errors ? { errors: error.errors } : {}), error: sentence });
        // A refusal of the person (no Send messages, no Attach files) is an error page, not a form to correct.
        if (error instanceof AccessError) throw error;
        return render(request, reply, channel.id, { error: sentence, content, status: error.status });
      }
      return reply.redirect(`/channels/${channel.id}#post`, 303);
    });
  });
}
