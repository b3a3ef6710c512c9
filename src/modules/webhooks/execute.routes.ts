/**
 * The webhook URL routes (SPEC §4, §5.7): execute, its message routes and the webhook by token,
 * behind one gate that checks the id, the token and the bucket before the body is read.
 * Invariant: every answer carries the rate-limit headers; a 429 is rendered by the error handler's
 * sendRateLimited; message bodies are parsed by message-payload.ts (the schemas only document).
 * Tested by test/http/webhook-execute.test.ts, webhook-rate-limit.test.ts,
 * webhook-messages.test.ts and webhook-hot-path.test.ts.
 */
import type { FastifyReply, FastifyRequest, FastifySchemaCompiler } from 'fastify';
import { RateLimitedError } from '../../core/errors.js';
import type { App } from '../../http/app-type.js';
import type { Acting, WebhookActor } from '../../core/acting.js';
import { requestActing } from '../../http/acting.js';
import { apiErrorResponses } from '../../http/error.schemas.js';
import { sendRateLimited } from '../../http/error-handler.js';
import { uploadOf } from '../files/multipart.routes.js';
import type { Services } from '../../deps.js';
import { MESSAGE_BODY_LIMIT } from '../messages/message-body-limit.js';
import { IMAGE_BODY_LIMIT } from '../resources/uploaded-images.js';
import { sealPlainGithubSecrets } from './compat-execute.service.js';
import { registerCompatibleExecuteApi } from './compat.routes.js';
import { executeWebhook, openWebhook, parseWait, type WebhookWrite } from './execute.service.js';
import { deleteMessageOfWebhook, deleteWebhookByToken, editWebhookMessage, getWebhookMessage, updateWebhookByToken, webhookByToken } from './webhook-messages.service.js';
import { rateLimitedHeaders, rateLimitHeaders } from './webhook-rate-limit.js';
import type { Webhook } from './webhooks.js';
import {
  deleteInteractionMessageOf,
  editInteractionMessageOf,
  getInteractionMessage,
  openInteractionToken,
  postFollowup,
  type InteractionMessageResource,
  type StoredInteraction,
} from '../interactions/followups.service.js';
import { INTERACTION_TOKEN_PREFIX } from '../interactions/interactions.js';
import {
  EditMessageBody,
  ExecuteBody,
  ExecuteQuery,
  PatchWebhookByTokenBody,
  RateLimitedBody,
  WebhookMessageBody,
  WebhookMessageParams,
  WebhookRecordBody,
  WebhookUrlParams,
} from './webhooks.schemas.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The webhook whose URL (id and token) this request presented, once checked. */
    webhook: Webhook | undefined;
    /** Issue #40 §2: the interaction whose token (with its application id) this request presented instead, once checked. */
    interaction: StoredInteraction | undefined;
  }
}

/** The routes of a webhook URL (SPEC §4, §5.7): authorised by the token in the path. */
export const WEBHOOK_URL = '/api/v1/webhooks/:id/:token';
const WEBHOOK_MESSAGE_URL = `${WEBHOOK_URL}/messages/:messageId`;

/**
 * The schemas of these routes document the API; message-payload.ts validates (lengths counted in
 * code points, the 6000 total, Discord's aliases and ignored keys, and every error at its path in
 * one 50035). AJV would also coerce types in place (`coerceTypes`), so it must not touch the body.
 */
const documentationOnly: FastifySchemaCompiler<unknown> = () => (value) => ({ value });

const errors = { ...apiErrorResponses(401, 404), 429: RateLimitedBody };
/** Issue #36 §2: the routes that write a message unsigned answer 403 (50013) when the webhook has a GitHub secret. */
const writeErrors = { ...errors, ...apiErrorResponses(403) };
const withBodyErrors = { ...apiErrorResponses(400), ...errors };
const withBodyWriteErrors = { ...apiErrorResponses(400), ...writeErrors };
const signedOnlyNote = 'A webhook with a GitHub secret answers 403 (50013) here: it accepts only signed GitHub deliveries (docs/webhooks.md "GitHub secret").';
const interactionNote =
  'With an interaction token instead of a webhook token, the id is the application id and the route is Discord’s interaction follow-up: the app’s bot posts, reads, edits or deletes the messages of that interaction (messages/@original is its answer) for 15 minutes; a follow-up with flags 64 is ephemeral, for the person who used the command alone; an expired token is 401 (50027), an unknown one or another app’s 404 (10015). The answer is Discord’s message of type 20 with interaction_metadata.';
const rateLimitNote =
  'Every answer carries X-RateLimit-Limit, -Remaining, -Reset, -Reset-After and -Bucket; SPEC §8: 10 requests per 2 s per webhook over all of its URL routes (docs/webhooks.md).';

/**
 * Issue #40 §2: an interaction's message is Discord's message of type 20 with `interaction_metadata`,
 * fields the webhook message schema (type 0) would drop, so it is written as it is.
 */
function sendInteractionMessage(reply: FastifyReply, message: InteractionMessageResource): FastifyReply {
  return reply.code(200).type('application/json').serializer(JSON.stringify).send(message);
}

function webhookOf(request: FastifyRequest): Webhook {
  const webhook = request.webhook;
  if (!webhook) throw new Error('webhookOf() called on a route without the webhook gate');
  return webhook;
}

export function registerWebhookExecuteApi(app: App, services: Services): void {
  /** Issue #37 §1: the URL's holder acts as the webhook whose token the gate checked. */
  const holder = (request: FastifyRequest, webhook: Webhook): Acting<WebhookActor> => requestActing(request, services.clock, { kind: 'webhook', id: webhook.id });

  app.decorateRequest('webhook', undefined);
  app.decorateRequest('interaction', undefined);
  /** Issue #40 §2: an interaction's follow-ups act as the app's bot. */
  const botOf = (request: FastifyRequest, interaction: StoredInteraction) =>
    requestActing(request, services.clock, { kind: 'bot', id: interaction.botUserId, applicationId: interaction.applicationId } as const);
  // Issue #21 §1: a message body is read only as far as the largest real message needs.
  const messageBodyLimit = Math.min(MESSAGE_BODY_LIMIT, services.config.bodyLimit);

  /**
   * Runs before the body is even read: an unknown id, a wrong token or an empty bucket is
   * answered without parsing anything, and the rate-limit headers are on every answer, errors
   * (invalid JSON included) as well as successes (DESIGN §1).
   */
  async function gateAs(use: 'record' | 'execute', writes: WebhookWrite | 'none', request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
    const { id, token } = request.params as { id: string; token: string };
    // Issue #40 §2: Discord's interaction follow-ups share these paths, `{application_id}/{interaction token}`;
    // the token's prefix tells them apart (interactions.ts INTERACTION_TOKEN_PREFIX).
    if (use === 'execute' || writes !== 'none' || (request.params as { messageId?: string }).messageId !== undefined) {
      if (token.startsWith(INTERACTION_TOKEN_PREFIX)) return interactionGate(request, reply, id, token);
    }
    const opened = await openWebhook(services, id, token, request.ip, use, writes);
    if (!opened.ok) return refuse(reply, opened);
    reply.headers(rateLimitHeaders(opened.limit.decision, opened.limit.bucket));
    request.webhook = opened.webhook;
  }
  /**
   * A gate's refusal, with its bucket's headers. SPEC §8's 429 is these routes' most frequent answer
   * under abuse: sent here with the error handler's own renderer instead of thrown through Fastify's
   * error path (docs/performance.md §Rate limits and the 429 path). Returning the reply ends the
   * hooks; the headers and body are the same.
   */
  function refuse(reply: FastifyReply, opened: { error: Error; limit: { decision: Parameters<typeof rateLimitHeaders>[0]; bucket: Parameters<typeof rateLimitHeaders>[1]; scope: Parameters<typeof rateLimitedHeaders>[0] } }): FastifyReply {
    reply.headers(rateLimitHeaders(opened.limit.decision, opened.limit.bucket));
    if (!(opened.error instanceof RateLimitedError)) throw opened.error;
    reply.headers(rateLimitedHeaders(opened.limit.scope));
    return sendRateLimited(reply, opened.error);
  }
  /** An interaction token on a follow-up route: the same rate-limit headers, Discord's 404/401 bodies. */
  async function interactionGate(request: FastifyRequest, reply: FastifyReply, applicationId: string, token: string): Promise<FastifyReply | undefined> {
    const opened = await openInteractionToken(services, applicationId, token, request.ip);
    if (!opened.ok) return refuse(reply, opened);
    reply.headers(rateLimitHeaders(opened.limit.decision, opened.limit.bucket));
    request.interaction = opened.interaction;
  }
  // Issue #36 §2: reading, renaming and deleting the webhook forge no message, so they stay open
  // to its URL when it has a GitHub secret; every route that writes a message unsigned does not.
  const gate = (request: FastifyRequest, reply: FastifyReply) => gateAs('record', 'none', request, reply);
  const unsignedWriteGate = (request: FastifyRequest, reply: FastifyReply) => gateAs('record', 'unsigned', request, reply);
  // Only execute stores through a statement that checks the token again (execute.service.ts).
  const executeGate = (request: FastifyRequest, reply: FastifyReply) => gateAs('execute', 'unsigned', request, reply);

  app.post(
    WEBHOOK_URL,
    {
      onRequest: executeGate,
      bodyLimit: messageBodyLimit,
      validatorCompiler: documentationOnly,
      schema: {
        tags: ['Webhooks'],
        summary: 'Execute a webhook',
        description: `SPEC §2.9: posts a message in the webhook's channel. content ≤ 2000 code points, embeds ≤ 10 (6000 characters over all), at least one of them or a file (50006); username and avatarUrl override the author for this message only. Mentions stay literal text. Files: multipart/form-data with files[0..9], payload_json and attachments[] ({id, filename, description}), as Discord; 25 MiB per message by default (413 40005 beyond); embeds may show them as attachment://filename (docs/files.md). ${signedOnlyNote} ${interactionNote} ${rateLimitNote}`,
        params: WebhookUrlParams,
        querystring: ExecuteQuery,
        body: ExecuteBody,
        response: {
          200: WebhookMessageBody,
          204: { type: 'null', description: 'Posted (wait absent or false)' },
          ...withBodyWriteErrors,
        },
      },
    },
    async (request, reply) => {
      const wait = parseWait((request.query as Record<string, unknown>)['wait']);
      // Discord answers an interaction follow-up with its message whatever `wait` says.
      // Issue #42 §2: multipart/form-data carries files (streamed to the store by the service), follow-ups' too.
      const upload = uploadOf(request, services.config.attachmentMaxBytes, messageBodyLimit);
      if (request.interaction) return sendInteractionMessage(reply, await postFollowup(services, botOf(request, request.interaction), request.interaction, request.body as unknown, upload));
      const webhook = webhookOf(request);
      const record = await executeWebhook(services, holder(request, webhook), webhook, request.body as unknown, wait, 'unsigned', upload);
      if (record === undefined) return reply.code(204).send(null);
      return record;
    },
  );

  app.get(
    WEBHOOK_URL,
    {
      onRequest: gate,
      schema: {
        tags: ['Webhooks'],
        summary: 'Get a webhook by its URL',
        description: `The webhook record, without its token or creator. ${rateLimitNote}`,
        params: WebhookUrlParams,
        response: { 200: WebhookRecordBody, ...errors },
      },
    },
    async (request) => webhookByToken(services, webhookOf(request)),
  );

  app.patch(
    WEBHOOK_URL,
    {
      onRequest: gate,
      // Issue #42 §3: room for `avatar`, up to 10 MiB of image as base64.
      bodyLimit: Math.max(services.config.bodyLimit, IMAGE_BODY_LIMIT),
      validatorCompiler: documentationOnly,
      schema: {
        tags: ['Webhooks'],
        summary: 'Rename a webhook or change its avatar by its URL',
        description: `name 1–80 (may not pass for the service), avatarUrl https or null (alias avatar_url), or avatar: image data (\`data:image/png;base64,…\`) uploaded to Gatehouse, or null. The token never changes here. ${rateLimitNote}`,
        params: WebhookUrlParams,
        body: PatchWebhookByTokenBody,
        response: { 200: WebhookRecordBody, ...withBodyErrors },
      },
    },
    async (request) => {
      const webhook = webhookOf(request);
      return updateWebhookByToken(services, holder(request, webhook), webhook, request.body as unknown);
    },
  );

  app.delete(
    WEBHOOK_URL,
    {
      onRequest: gate,
      schema: {
        tags: ['Webhooks'],
        summary: 'Delete a webhook by its URL',
        description: `SPEC §3: afterwards every call on this webhook answers 404 (10015). Its messages stay in the channel. ${rateLimitNote}`,
        params: WebhookUrlParams,
        response: { 204: { type: 'null', description: 'Deleted' }, ...errors },
      },
    },
    async (request, reply) => {
      const webhook = webhookOf(request);
      await deleteWebhookByToken(services, holder(request, webhook), webhook);
      return reply.code(204).send(null);
    },
  );

  app.get(
    WEBHOOK_MESSAGE_URL,
    {
      onRequest: gate,
      schema: {
        tags: ['Webhooks'],
        summary: 'Get a message the webhook posted',
        description: `Only messages of this webhook; any other id answers 404 (10008). ${interactionNote} ${rateLimitNote}`,
        params: WebhookMessageParams,
        response: { 200: WebhookMessageBody, ...errors },
      },
    },
    async (request, reply) =>
      request.interaction
        ? sendInteractionMessage(reply, await getInteractionMessage(services, request.interaction, request.params.messageId))
        : getWebhookMessage(services, webhookOf(request), request.params.messageId),
  );

  app.patch(
    WEBHOOK_MESSAGE_URL,
    {
      onRequest: unsignedWriteGate,
      bodyLimit: messageBodyLimit,
      validatorCompiler: documentationOnly,
      schema: {
        tags: ['Webhooks'],
        summary: 'Edit a message the webhook posted',
        description: `content and/or embeds under the rules of execute; absent fields stay; the message may not end up empty (50006); username and avatar cannot change; sets editedAt. multipart/form-data adds files as execute does; attachments[], when given, lists the files that stay (docs/files.md). ${signedOnlyNote} ${interactionNote} ${rateLimitNote}`,
        params: WebhookMessageParams,
        body: EditMessageBody,
        response: { 200: WebhookMessageBody, ...withBodyWriteErrors },
      },
    },
    async (request, reply) => {
      const upload = uploadOf(request, services.config.attachmentMaxBytes, messageBodyLimit);
      if (request.interaction) return sendInteractionMessage(reply, await editInteractionMessageOf(services, botOf(request, request.interaction), request.interaction, request.params.messageId, request.body as unknown, upload));
      const webhook = webhookOf(request);
      return editWebhookMessage(services, holder(request, webhook), webhook, request.params.messageId, request.body as unknown, upload);
    },
  );

  app.delete(
    WEBHOOK_MESSAGE_URL,
    {
      onRequest: unsignedWriteGate,
      schema: {
        tags: ['Webhooks'],
        summary: 'Delete a message the webhook posted',
        description: `Only messages of this webhook; any other id answers 404 (10008). ${signedOnlyNote} ${interactionNote} ${rateLimitNote}`,
        params: WebhookMessageParams,
        response: { 204: { type: 'null', description: 'Deleted' }, ...writeErrors },
      },
    },
    async (request, reply) => {
      if (request.interaction) {
        await deleteInteractionMessageOf(services, botOf(request, request.interaction), request.interaction, request.params.messageId);
        return reply.code(204).send(null);
      }
      const webhook = webhookOf(request);
      await deleteMessageOfWebhook(services, holder(request, webhook), webhook, request.params.messageId);
      return reply.code(204).send(null);
    },
  );

  // Issue #36 §2: GitHub secrets a migration carried over in plain text are sealed at start-up
  // (migrations never see the server secret). A failure leaves them to be sealed at first use.
  app.addHook('onReady', async () => {
    try {
      const sealed = await sealPlainGithubSecrets(services);
      if (sealed > 0) services.logger.info({ sealed }, 'GitHub secrets sealed with the server secret');
    } catch (error) {
      services.logger.warn({ reason: error instanceof Error ? error.message : String(error) }, 'GitHub secrets not sealed at start-up; each is sealed at its next delivery');
    }
  });

  // Issue #23: the Slack- and GitHub-compatible routes behind the same gate (compat.routes.ts).
  registerCompatibleExecuteApi(app, services, { signed: gate, unsigned: unsignedWriteGate });
}
