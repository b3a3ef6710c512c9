import type { FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { AccessError, ApiError, invalidField, PageError } from '../../core/errors.js';
import type { Services } from '../../deps.js';
import { personActing } from '../../http/acting.js';
import type { App } from '../../http/app-type.js';
import { apiErrorResponses } from '../../http/error.schemas.js';
import { sendHtml, signedInContext, signedInPages } from '../../http/pages.js';
import { setOwnAvatar } from '../accounts/avatar.service.js';
import { profilePage } from '../accounts/accounts.page.js';
import { getPerson } from '../accounts/accounts.service.js';
import { pendingEmail } from '../accounts/email-verification.service.js';
import { setApplicationIcon } from '../applications/applications.service.js';
import { botActing, botOf, requireBot } from '../applications/bot-auth.routes.js';
import { render as renderServerSettings } from '../directory/server-settings.routes.js';
import { setServerIcon } from '../directory/servers.service.js';
import { uploadOf } from '../files/multipart.routes.js';
import { mailConfigured } from '../mail/mail.service.js';
import { botUser } from '../oauth/identity.service.js';
import { UserRecordBody } from '../oauth/oauth.schemas.js';
import { RateLimitedBody } from '../webhooks/webhooks.schemas.js';
import { updateWebhookAs } from '../webhooks/webhooks.service.js';
import { IMAGE_BODY_LIMIT, UPLOADED_IMAGE_MAX_BYTES } from './uploaded-images.js';

const ServerParams = Type.Object({ serverId: Type.String({ maxLength: 32 }) });
// `:id`, as the app's other pages name it: one route tree node takes one parameter name.
const AppParams = Type.Object({ id: Type.String({ maxLength: 32 }) });
const WebhookParams = Type.Object({ webhookId: Type.String({ maxLength: 32 }) });
const BackQuery = Type.Object({ back: Type.Optional(Type.String({ maxLength: 16 })), _csrf: Type.Optional(Type.String()) });

const ModifyCurrentUserBody = Type.Object(
  {
    avatar: Type.Optional(Type.Union([Type.Null(), Type.String()], { description: 'Image data to upload (`data:image/png;base64,…`: PNG, JPEG, GIF or WebP, at most 10 MiB), or null to remove the avatar' })),
  },
  { additionalProperties: true },
);

/** Discord's Modify Current User for a bot (issue #42 §3): its `avatar`. */
export function registerImageUploadApi(app: App, services: Services): void {
  app.patch(
    '/api/v1/users/@me',
    {
      onRequest: requireBot(services),
      // Room for `avatar`, up to 10 MiB of image as base64.
      bodyLimit: Math.max(services.config.bodyLimit, IMAGE_BODY_LIMIT),
      schema: {
        tags: ['Users'],
        summary: "Change the bot's avatar",
        description:
          "With `Authorization: Bot <token>`: Discord's Modify Current User, of which Gatehouse takes `avatar`: image data (`data:image/png;base64,…`: PNG, JPEG, GIF or WebP, at most 10 MiB; anything else 400 50035 at `avatar`, nothing stored), served at `/avatars/{user_id}/{hash}.png`, or null to remove it. Other fields are ignored. People change theirs in Settings → Profile.",
        security: [{ bot: [] }],
        body: ModifyCurrentUserBody,
        response: { 200: UserRecordBody, ...apiErrorResponses(400, 401), 429: RateLimitedBody },
      },
    },
    async (request) => {
      const bot = botOf(request);
      if (request.body.avatar !== undefined) await setOwnAvatar(services, botActing(request, services.clock), request.body.avatar);
      return botUser(services, bot);
    },
  );
}

/** What a page's image form sent: the chosen file's bytes, or a removal. */
type ImageFormAction = { kind: 'upload'; bytes: Buffer } | { kind: 'remove' };

/**
 * Reads an image form's multipart body (image-upload.page.ts): `do` (upload | remove) and the
 * file `image`, at most UPLOADED_IMAGE_MAX_BYTES (one byte more is read, to know it is too large,
 * and the rest is not kept). 400 50035 at `image` when no file was chosen or it is too large.
 */
async function readImageForm(request: FastifyRequest): Promise<ImageFormAction> {
  const upload = uploadOf(request, UPLOADED_IMAGE_MAX_BYTES, 64);
  if (upload === undefined) throw invalidField(['image'], 'BASE_TYPE_REQUIRED', 'Choose an image file to upload.');
  let action = 'upload';
  let bytes: Buffer | undefined;
  let tooLarge = false;
  for await (const part of upload.parts) {
    if (part.kind === 'field') {
      if (part.name === 'do') action = part.value;
      continue;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of part.stream as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (part.name !== 'image' || size > UPLOADED_IMAGE_MAX_BYTES) tooLarge ||= part.name === 'image';
        else chunks.push(chunk);
      }
    } catch (error) {
      throw upload.asError(error);
    }
    if (part.name === 'image' && size > 0 && !tooLarge) bytes = Buffer.concat(chunks, size);
  }
  if (action === 'remove') return { kind: 'remove' };
  if (tooLarge) throw invalidField(['image'], 'BINARY_TYPE_MAX_SIZE', `File cannot be larger than ${UPLOADED_IMAGE_MAX_BYTES / 1024 / 1024} MiB`);
  if (bytes === undefined) throw invalidField(['image'], 'BASE_TYPE_REQUIRED', 'Choose an image file to upload.');
  return { kind: 'upload', bytes };
}

/** The sentence a page shows for a refused image: the first field error's. */
function refusal(error: ApiError): string {
  const fields = Object.values((error.errors ?? {}) as Record<string, { _errors?: { message: string }[] }>);
  return fields.find((f) => f._errors?.[0])?._errors?.[0]?.message ?? error.message;
}

/**
 * The pages' image forms (issue #42 §3), in a pages context with the multipart parser (app.ts):
 * Settings → Profile's avatar, a server's icon (Server settings → Overview), an app's icon (the
 * developer portal's app page), a webhook's avatar (Integrations). Each posts, then redirects to its page; a refused image shows the
 * page again with the reason beside the form (400).
 */
export function registerImageUploadPages(pages: App, services: Services): void {
  signedInPages(pages, (scope) => {
    const body = { content: { 'multipart/form-data': { schema: { type: 'null' } } } } as const;
    scope.post('/settings/avatar', { schema: { hide: true, body } }, async (request, reply) => {
      try {
        const action = await readImageForm(request);
        await setOwnAvatar(services, personActing(request, services.clock), action.kind === 'remove' ? null : action.bytes, 'image');
        return reply.redirect('/settings/profile?saved=1', 303);
      } catch (error) {
        if (!(error instanceof ApiError) || error.status >= 500) throw error;
        const person = await getPerson(services, request.signedInViewer.id);
        if (!person) throw error;
        const pending = await pendingEmail(services, person);
        return sendHtml(reply, profilePage({ ctx: signedInContext(request, services), person, errors: {}, imageError: refusal(error), pendingEmail: pending, mail: mailConfigured(services) }), 400);
      }
    });

    scope.post('/servers/:serverId/settings/icon', { schema: { hide: true, params: ServerParams, body } }, async (request, reply) => {
      const { serverId } = request.params;
      try {
        const action = await readImageForm(request);
        await setServerIcon(services, personActing(request, services.clock), serverId, action.kind === 'remove' ? null : action.bytes, 'image');
        return reply.redirect(`/servers/${serverId}/settings?done=icon-saved`, 303);
      } catch (error) {
        // A refusal of the person (not a member, no Manage server) is an error page, not a form to correct.
        if (!(error instanceof ApiError) || error.status >= 500 || error instanceof AccessError || error.code !== 50035) throw error;
        return renderServerSettings(services, request, reply, serverId, 'overview', { error: { form: 'icon', message: refusal(error) }, status: 400 });
      }
    });

    scope.post('/developers/applications/:id/icon', { schema: { hide: true, params: AppParams, body } }, async (request, reply) => {
      const { id: appId } = request.params;
      try {
        const action = await readImageForm(request);
        await setApplicationIcon(services, personActing(request, services.clock), appId, action.kind === 'remove' ? null : action.bytes, 'image');
        return reply.redirect(`/developers/applications/${appId}?saved=1`, 303);
      } catch (error) {
        if (!(error instanceof ApiError) || error.status >= 500 || error instanceof AccessError || error.code !== 50035) throw error;
        throw new PageError(400, 'Image refused', `${refusal(error)} Go back and choose another file.`);
      }
    });

    // From a webhook's item on a server's or a channel's Integrations page (`back` says which).
    scope.post('/webhooks/:webhookId/avatar', { schema: { hide: true, params: WebhookParams, querystring: BackQuery, body } }, async (request, reply) => {
      const { webhookId } = request.params;
      try {
        const action = await readImageForm(request);
        const webhook = await updateWebhookAs(services, personActing(request, services.clock), webhookId, { avatar: action.kind === 'remove' ? null : action.bytes });
        const base = request.query.back === 'channel' ? `/channels/${webhook.channelId}/settings/integrations` : `/servers/${webhook.serverId}/settings/integrations`;
        return reply.redirect(`${base}?done=webhook-saved#webhook-${webhook.id}`, 303);
      } catch (error) {
        if (!(error instanceof ApiError) || error.status >= 500 || error instanceof AccessError || error.code !== 50035) throw error;
        throw new PageError(400, 'Image refused', `${refusal(error)} Go back and choose another file.`);
      }
    });
  });
}
