import type { FastifyRequest } from 'fastify';
import { ApiError } from '../../core/errors.js';
import type { App } from '../../http/app-type.js';
import type { Services } from '../../deps.js';
import { personActing } from '../../http/acting.js';
import { formErrorMessage } from '../../web/components.js';
import { actorOf, sendHtml, signedInContext, signedInPages } from '../../http/pages.js';
import { confirmDeleteMessagePage, confirmDismissPage, conversationUrl, editMessagePage } from './message-actions.page.js';
import { dismissEphemeralMessage, ephemeralToDismiss } from './interaction-messages.service.js';
import { DeleteMessageBody, EditMessageBody, MessageParams } from './message-actions.schemas.js';
import { deleteMessage, editMessage, messageToDelete, messageToEdit } from './message-actions.service.js';
import { messageItem } from './message-list.page.js';

const hide = { hide: true } as const;

/**
 * A page script's fetch asks for JSON (composer.js, message-actions.js): it gets the outcome
 * instead of the 303 a plain form gets, and updates the page without reloading it.
 */
export function wantsJson(request: FastifyRequest): boolean {
  return (request.headers.accept ?? '').includes('application/json');
}

/** Editing and deleting a message (issue #24 "Writing"), and dismissing an app's ephemeral one (issue #40 §2): forms for pages without JavaScript, JSON for the page scripts. */
export function registerMessageActionPages(pages: App, services: Services): void {
  signedInPages(pages, (scope) => {
    const base = '/channels/:channelId/messages/:messageId';

    scope.get(`${base}/edit`, { schema: { ...hide, params: MessageParams } }, async (request, reply) => {
      const found = await messageToEdit(services, actorOf(request), request.params.channelId, request.params.messageId);
      return sendHtml(reply, editMessagePage({ ctx: signedInContext(request, services), channel: found.channel, message: found.message }));
    });

    scope.post(`${base}/edit`, { schema: { ...hide, params: MessageParams, body: EditMessageBody } }, async (request, reply) => {
      const { channelId, messageId } = request.params;
      const content = request.body.content ?? '';
      try {
        const edited = await editMessage(services, personActing(request, services.clock), channelId, messageId, content);
        if (wantsJson(request)) return reply.send({ id: messageId, html: messageItem(edited.message, { rights: edited.rights }).value });
        return reply.redirect(`${conversationUrl(edited.channel)}#m${messageId}`, 303);
      } catch (error) {
        if (!(error instanceof ApiError) || error.status !== 400 || wantsJson(request)) throw error;
        const found = await messageToEdit(services, actorOf(request), channelId, messageId);
        const page = editMessagePage({ ctx: signedInContext(request, services), channel: found.channel, message: found.message, error: { form: 'edit', message: formErrorMessage(error) }, content });
        return sendHtml(reply, page, error.status);
      }
    });

    scope.get(`${base}/delete`, { schema: { ...hide, params: MessageParams } }, async (request, reply) => {
      const found = await messageToDelete(services, actorOf(request), request.params.channelId, request.params.messageId);
      return sendHtml(reply, confirmDeleteMessagePage({ ctx: signedInContext(request, services), channel: found.channel, message: found.message }));
    });

    scope.post(`${base}/delete`, { schema: { ...hide, params: MessageParams, body: DeleteMessageBody } }, async (request, reply) => {
      const deleted = await deleteMessage(services, personActing(request, services.clock), request.params.channelId, request.params.messageId);
      if (wantsJson(request)) return reply.code(204).send();
      return reply.redirect(conversationUrl(deleted.channel), 303);
    });

    // Issue #40 §2: Discord's "Dismiss message" on an ephemeral message, by its one reader.
    scope.get(`${base}/dismiss`, { schema: { ...hide, params: MessageParams } }, async (request, reply) => {
      const found = await ephemeralToDismiss(services, request.signedInViewer.id, request.params.channelId, request.params.messageId);
      return sendHtml(reply, confirmDismissPage({ ctx: signedInContext(request, services), channel: found.channel, message: found.message }));
    });

    scope.post(`${base}/dismiss`, { schema: { ...hide, params: MessageParams, body: DeleteMessageBody } }, async (request, reply) => {
      const dismissed = await dismissEphemeralMessage(services, personActing(request, services.clock), request.params.channelId, request.params.messageId);
      if (wantsJson(request)) return reply.code(204).send();
      return reply.redirect(conversationUrl(dismissed.channel), 303);
    });
  });
}
