import { Type } from '@sinclair/typebox';
import type { App } from '../../http/app-type.js';
import { apiErrorResponses } from '../../http/error.schemas.js';
import type { Services } from '../../deps.js';
import { botActing, botOf, requireBot } from '../applications/bot-auth.routes.js';
import { botActor } from '../applications/bots.service.js';
import { IMAGE_BODY_LIMIT } from '../resources/uploaded-images.js';
import {
  ChannelIdParams,
  RateLimitedBody,
  WebhookIdParams,
  WebhookListBody,
  WebhookManageBody,
  WebhookRecordBody,
} from './webhooks.schemas.js';
import {
  botCreateWebhook,
  botListChannelWebhooks,
  deleteWebhookAs,
  getWebhookAs,
  regenerateWebhookTokenAs,
  updateWebhookAs,
  type WebhookInput,
} from './webhooks.service.js';
import { presentWebhook } from './webhooks.js';

const tags = ['Webhooks'];
const security = [{ bot: [] }];
// Issue #40 §4: every bot route may answer 429 (docs/bots.md "Rate limits").
const errors = { ...apiErrorResponses(400, 401, 403, 404), 429: RateLimitedBody };

/**
 * DESIGN §1 aliases: Discord's `avatar_url` for `avatarUrl`. Discord's own `avatar` field is
 * image data (issue #42 §3: uploaded to the blob store; docs/files.md "Avatars and icons").
 */
function webhookInput(body: WebhookManageBody): WebhookInput {
  const avatarUrl = body.avatarUrl !== undefined ? body.avatarUrl : body.avatar_url;
  return { name: body.name, avatarUrl: avatarUrl === null ? null : avatarUrl, ...(body.avatar !== undefined ? { avatar: body.avatar } : {}) };
}

/**
 * Creating and managing webhooks with bot credentials (issue #5; SPEC §5.8: Manage webhooks).
 * The by-token routes under /api/v1/webhooks/{id}/{token} are the execute module's.
 */
export function registerWebhookManagementApi(app: App, services: Services): void {
  const baseUrl = services.config.baseUrl;
  const onRequest = requireBot(services);
  // Issue #42 §3: room for `avatar`, up to 10 MiB of image as base64.
  const bodyLimit = Math.max(services.config.bodyLimit, IMAGE_BODY_LIMIT);

  app.post(
    '/api/v1/channels/:channelId/webhooks',
    {
      onRequest,
      bodyLimit,
      schema: {
        tags,
        summary: 'Create a webhook',
        description:
          'Needs Manage webhooks and View channel in the channel’s server (403 50013; a channel of a server the bot is not in: 404 10003). Body {name (1–80), avatarUrl? (https) or avatar? (image data, uploaded)}. The answer is the only time the token and URL are shown; only a hash is kept. At most 10 per channel (400 30007).',
        security,
        params: ChannelIdParams,
        body: WebhookManageBody,
        response: { 201: WebhookRecordBody, ...errors },
      },
    },
    async (request, reply) => {
      const issued = await botCreateWebhook(services, botActing(request, services.clock), botOf(request), request.params.channelId, webhookInput(request.body));
      return reply.code(201).send(presentWebhook(issued.webhook, { withToken: issued.token, baseUrl }));
    },
  );

  app.get(
    '/api/v1/channels/:channelId/webhooks',
    {
      onRequest,
      schema: {
        tags,
        summary: 'List the webhooks of a channel',
        description: 'Needs Manage webhooks. Records never include the token.',
        security,
        params: ChannelIdParams,
        response: { 200: WebhookListBody, ...errors },
      },
    },
    async (request) => (await botListChannelWebhooks(services, botOf(request), request.params.channelId)).map((w) => presentWebhook(w, { baseUrl })),
  );

  app.get(
    '/api/v1/webhooks/:id',
    {
      onRequest,
      schema: {
        tags,
        summary: 'Get a webhook',
        description: 'Needs Manage webhooks in the webhook’s server. Unknown webhooks and those of servers the bot is not in: 404 10015. Never the token.',
        security,
        params: WebhookIdParams,
        response: { 200: WebhookRecordBody, ...errors },
      },
    },
    async (request) => presentWebhook(await getWebhookAs(services, botActor(botOf(request)), request.params.id), { baseUrl }),
  );

  app.patch(
    '/api/v1/webhooks/:id',
    {
      onRequest,
      bodyLimit,
      schema: {
        tags,
        summary: 'Rename a webhook or change its avatar',
        description: 'Needs Manage webhooks. Body {name?, avatarUrl?, avatar?}; absent fields stay, avatarUrl or avatar null removes the avatar; avatar is image data (`data:image/png;base64,…`), stored on Gatehouse. The token never changes here.',
        security,
        params: WebhookIdParams,
        body: WebhookManageBody,
        response: { 200: WebhookRecordBody, ...errors },
      },
    },
    async (request) => presentWebhook(await updateWebhookAs(services, botActing(request, services.clock), request.params.id, webhookInput(request.body)), { baseUrl }),
  );

  app.delete(
    '/api/v1/webhooks/:id',
    {
      onRequest,
      schema: {
        tags,
        summary: 'Delete a webhook',
        description: 'Needs Manage webhooks. 204; the URL stops working (404 10015) and the channel gets its slot back. Messages it posted stay.',
        security,
        params: WebhookIdParams,
        response: { 204: Type.Null({ description: 'Deleted' }), ...errors },
      },
    },
    async (request, reply) => {
      await deleteWebhookAs(services, botActing(request, services.clock), request.params.id);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/api/v1/webhooks/:id/token',
    {
      onRequest,
      schema: {
        tags,
        summary: 'Regenerate a webhook’s token',
        description: 'Needs Manage webhooks. Answers the record with a new token and URL, shown once; the old URL stops working at once (401 50027).',
        security,
        params: WebhookIdParams,
        response: { 200: WebhookRecordBody, ...errors },
      },
    },
    async (request) => {
      const issued = await regenerateWebhookTokenAs(services, botActing(request, services.clock), request.params.id);
      return presentWebhook(issued.webhook, { withToken: issued.token, baseUrl });
    },
  );
}
