import type { FastifyReply, FastifyRequest } from 'fastify';
import { person } from '../../core/actor.js';
import { ApiError, RateLimitedError } from '../../core/errors.js';
import { personActing } from '../../http/acting.js';
import type { App } from '../../http/app-type.js';
import { apiErrorResponses } from '../../http/error.schemas.js';
import { RateLimitedBody } from '../webhooks/webhooks.schemas.js';
import { sendHtml, signedInContext, signedInPages } from '../../http/pages.js';
import type { Services } from '../../deps.js';
import { getManagedApplication, setApplicationIcon } from '../applications/applications.service.js';
import { botActing, botOf, requireBot } from '../applications/bot-auth.routes.js';
import { fieldMessages } from '../applications/portal.page.js';
import { botApplication } from '../oauth/identity.service.js';
import { ApplicationResourceBody } from '../resources/resources.schemas.js';
import type { ApplicationResource } from '../resources/resources.js';
import { IMAGE_BODY_LIMIT } from '../resources/uploaded-images.js';
import { EventWebhooksStatus } from './app-events.js';
import { webhooksPage, type WebhooksPageInput } from './app-events.page.js';
import { EventsForm, InteractionsForm, PatchApplicationBody, WebhooksParams, WebhooksQuery } from './app-events.schemas.js';
import { appEndpointsView, updateAppEndpoints } from './app-events.service.js';

const hide = { hide: true } as const;

function isFormError(error: unknown): error is ApiError {
  return error instanceof ApiError && error.code === 50035;
}

/** A save over the endpoint-check limit: the form again, the limit's sentence at the URL, 429 with Retry-After. */
function rateLimitedForm(reply: FastifyReply, error: RateLimitedError): { status: 429; message: string } {
  reply.header('Retry-After', String(Math.max(1, Math.ceil(error.retryAfterMs / 1000))));
  return { status: 429, message: error.message };
}

/** Discord's `PATCH /applications/@me` for the endpoint fields (issue #40 §2–§3), with bot credentials. */
export function registerAppEventsApi(app: App, services: Services): void {
  app.patch(
    '/api/v1/applications/@me',
    {
      onRequest: requireBot(services),
      // Issue #42 §3: room for `icon`, up to 10 MiB of image as base64.
      bodyLimit: Math.max(services.config.bodyLimit, IMAGE_BODY_LIMIT),
      schema: {
        tags: ['Applications'],
        summary: "Change the bot's application",
        description:
          "Discord's fields `interactions_endpoint_url`, `event_webhooks_url`, `event_webhooks_status` (1 off, 2 on) and `event_webhooks_types`, checked as the portal checks them: a new interactions URL must answer a signed PING with 200 `{\"type\":1}` and a bad signature with 401, an event URL a signed PING (type 0) with 204; otherwise 50035 names the check that failed and nothing changes. `icon` is image data (`data:image/png;base64,…`: PNG, JPEG, GIF or WebP, at most 10 MiB; anything else 400 50035 at `icon`) stored on Gatehouse and served at `/app-icons/{application_id}/{hash}.png` (the bot's avatar follows it), or null to remove it. A change that sends a check counts against a limit of 5 a minute per app (429 with `retry_after` over it, nothing sent). Other fields of Discord's body are ignored.",
        security: [{ bot: [] }],
        body: PatchApplicationBody,
        response: { 200: ApplicationResourceBody, ...apiErrorResponses(400, 401, 404), 429: RateLimitedBody },
      },
    },
    async (request): Promise<ApplicationResource> => {
      const bot = botOf(request);
      const body = request.body;
      // The icon first: a refused image changes nothing else either.
      const icon = body.icon === undefined ? undefined : await setApplicationIcon(services, botActing(request, services.clock), bot.application.id, body.icon);
      await updateAppEndpoints(services, botActing(request, services.clock), bot.application.id, {
        ...(body.interactions_endpoint_url !== undefined ? { interactionsEndpointUrl: body.interactions_endpoint_url } : {}),
        ...(body.event_webhooks_url !== undefined ? { eventWebhooksUrl: body.event_webhooks_url } : {}),
        ...(body.event_webhooks_status !== undefined ? { eventWebhooksStatus: body.event_webhooks_status } : {}),
        ...(body.event_webhooks_types !== undefined ? { eventWebhooksTypes: body.event_webhooks_types } : {}),
      });
      // The icon changed the application the request authenticated with: answer the stored one.
      return botApplication(services, icon === undefined ? bot : { ...bot, application: icon });
    },
  );
}

/** The portal's "Interactions and events" page of an app (issue #40), for its owner. */
export function registerAppEventsPages(pages: App, services: Services): void {
  signedInPages(pages, (signedIn) => registerWebhooksPages(signedIn, services));
}

function registerWebhooksPages(pages: App, services: Services): void {
  async function render(request: FastifyRequest, appId: string, extra: Omit<WebhooksPageInput, 'ctx' | 'app' | 'endpoints' | 'deliveries'>): Promise<string> {
    const actor = person(request.signedInViewer.id);
    const app = await getManagedApplication(services, actor, appId);
    const { endpoints, deliveries } = await appEndpointsView(services, actor, app.id);
    return webhooksPage({ ctx: signedInContext(request, services), app, endpoints, deliveries, ...extra });
  }

  pages.get('/developers/applications/:id/webhooks', { schema: { ...hide, params: WebhooksParams, querystring: WebhooksQuery } }, async (request, reply) => {
    const notice = request.query.saved === '1' ? 'Saved: the URL passed its checks.' : request.query.saved === '0' ? 'Saved.' : undefined;
    return sendHtml(reply, await render(request, request.params.id, { notice }));
  });

  pages.post('/developers/applications/:id/webhooks/interactions', { schema: { ...hide, params: WebhooksParams, body: InteractionsForm } }, async (request, reply) => {
    const url = request.body.interactionsEndpointUrl ?? '';
    try {
      await updateAppEndpoints(services, personActing(request, services.clock), request.params.id, { interactionsEndpointUrl: url });
      return reply.redirect(`/developers/applications/${request.params.id}/webhooks?saved=${url.trim() === '' ? '0' : '1'}#interactions`, 303);
    } catch (error) {
      if (error instanceof RateLimitedError) {
        const limited = rateLimitedForm(reply, error);
        return sendHtml(reply, await render(request, request.params.id, { interactions: { url, errors: { interactionsEndpointUrl: [limited.message] } } }), limited.status);
      }
      if (!isFormError(error)) throw error;
      const errors = fieldMessages(error.errors);
      return sendHtml(reply, await render(request, request.params.id, { interactions: { url, errors: { interactionsEndpointUrl: errors['interactions_endpoint_url'] ?? [] } } }), 400);
    }
  });

  pages.post('/developers/applications/:id/webhooks/events', { schema: { ...hide, params: WebhooksParams, body: EventsForm } }, async (request, reply) => {
    const body = request.body;
    const url = body.eventWebhooksUrl ?? '';
    const enabled = body.enabled === 'on';
    const types = body.types === undefined ? [] : Array.isArray(body.types) ? body.types : [body.types];
    try {
      await updateAppEndpoints(services, personActing(request, services.clock), request.params.id, {
        eventWebhooksUrl: url,
        eventWebhooksStatus: enabled ? EventWebhooksStatus.ENABLED : EventWebhooksStatus.DISABLED,
        eventWebhooksTypes: types,
      });
      return reply.redirect(`/developers/applications/${request.params.id}/webhooks?saved=${enabled ? '1' : '0'}#events`, 303);
    } catch (error) {
      if (error instanceof RateLimitedError) {
        const limited = rateLimitedForm(reply, error);
        return sendHtml(reply, await render(request, request.params.id, { events: { url, enabled, types, errors: { eventWebhooksUrl: [limited.message], enabled: [], types: [] } } }), limited.status);
      }
      if (!isFormError(error)) throw error;
      const errors = fieldMessages(error.errors);
      const fields = { eventWebhooksUrl: errors['event_webhooks_url'] ?? [], enabled: errors['event_webhooks_status'] ?? [], types: errors['event_webhooks_types'] ?? [] };
      return sendHtml(reply, await render(request, request.params.id, { events: { url, enabled, types, errors: fields } }), 400);
    }
  });
}
