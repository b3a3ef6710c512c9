import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, ApiErrors } from '../../core/errors.js';
import { Permission, has } from '../../core/permissions.js';
import { personActing } from '../../http/acting.js';
import type { App } from '../../http/app-type.js';
import type { Services } from '../../deps.js';
import { refused, type FormError, type FormValues } from '../../web/components.js';
import { sendHtml, signedInContext, signedInPages } from '../../http/pages.js';
import { INSTALLED_APPS_NOTICES } from '../applications/installs.page.js';
import { listServerInstalls } from '../applications/installs.service.js';
import { getChannel } from '../directory/channels.service.js';
import { settingsAbilities } from '../directory/server-settings.js';
import { requireAnyServerPermission, requireServerPermission } from '../directory/access.service.js';
import { confirmDeletePage, confirmRegeneratePage } from './webhook-confirm.page.js';
import { integrationsBase, integrationsPage, type IntegrationsScope, type IssuedUrl } from './webhooks.page.js';
import {
  IntegrationsChannelParams,
  IntegrationsChannelWebhookParams,
  IntegrationsQuery,
  IntegrationsServerParams,
  IntegrationsServerWebhookParams,
  WebhookConfirmBody,
  WebhookFormBody,
} from './webhooks.schemas.js';
import {
  channelOfServer,
  createWebhook,
  deleteWebhookAs,
  findScopedWebhook,
  loadIntegrations,
  regenerateWebhookTokenAs,
  updateWebhookAs,
} from './webhooks.service.js';
import { githubSecretsOfServer, setGithubSecret } from './compat-execute.service.js';
import { GithubSecretFormBody } from './compat.schemas.js';
import { webhookUrl, type Webhook } from './webhooks.js';
import { holdOnce, takeOnce } from '../reveals/reveals.service.js';
import { parseStoredImage } from '../resources/uploaded-images.js';

const hide = { hide: true } as const;

const NOTICES: Record<string, string> = {
  'webhook-saved': 'Webhook saved.',
  'github-secret-saved': 'GitHub secret saved.',
  'webhook-deleted': 'Webhook deleted. Its URL no longer works; its messages stay.',
  ...INSTALLED_APPS_NOTICES,
};

/** A page's scope after the viewer's access was checked. */
interface Resolved {
  serverId: string;
  scope: IntegrationsScope;
  permissions: bigint;
  base: string;
}

interface RenderExtra {
  issued?: IssuedUrl;
  notice?: string | undefined;
  error?: FormError;
  values?: FormValues;
  status?: number;
}

/**
 * Server settings → Integrations (/servers/:serverId/settings/integrations) and Channel settings →
 * Integrations (/channels/:channelId/settings/integrations): the same handlers for both, every
 * form posting below the page's own address (signed in; CSRF checked by the pages context).
 *
 * Access (docs/webhooks-management.md): the server page opens for Manage webhooks or Manage server
 * (it also lists installed apps); the channel page and every webhook form need Manage webhooks
 * (creating also View channel). Non-members get 404, members without the permission 403.
 */
export function registerWebhookPages(pages: App, services: Services): void {
  signedInPages(pages, (signedIn) => registerIntegrations(signedIn, services));
}

function registerIntegrations(pages: App, services: Services): void {
  async function serverScope(serverId: string, viewerId: string, bits: bigint, anyOf: boolean): Promise<Resolved> {
    const permissions = anyOf ? await requireAnyServerPermission(services, serverId, viewerId, bits) : await requireServerPermission(services, serverId, viewerId, bits);
    const scope: IntegrationsScope = { kind: 'server' };
    return { serverId, scope, permissions, base: integrationsBase(serverId, scope) };
  }

  async function channelScope(channelId: string, viewerId: string, bits: bigint): Promise<Resolved> {
    const channel = await getChannel(services, channelId);
    if (!channel || channel.serverId === null) throw ApiErrors.unknownChannel();
    const permissions = await requireServerPermission(services, channel.serverId, viewerId, bits, ApiErrors.unknownChannel);
    const scope: IntegrationsScope = { kind: 'channel', channel };
    return { serverId: channel.serverId, scope, permissions, base: integrationsBase(channel.serverId, scope) };
  }

  async function render(request: FastifyRequest, reply: FastifyReply, at: Resolved, extra: RenderExtra = {}) {
    const channelId = at.scope.kind === 'channel' ? at.scope.channel.id : undefined;
    const data = await loadIntegrations(services, at.serverId, channelId);
    if (!data) throw ApiErrors.unknownServer();
    const canManageWebhooks = has(at.permissions, Permission.MANAGE_WEBHOOKS);
    const markup = integrationsPage({
      ctx: signedInContext(request, services),
      scope: at.scope,
      server: data.server,
      can: settingsAbilities(at.permissions),
      canManageWebhooks,
      channels: data.channels,
      webhooks: canManageWebhooks ? data.webhooks : [],
      ...(at.scope.kind === 'server'
        ? { installedApps: { serverId: at.serverId, apps: await listServerInstalls(services, at.serverId), canManage: has(at.permissions, Permission.MANAGE_SERVER) } }
        : {}),
      ...(extra.issued ? { issued: extra.issued } : {}),
      ...(extra.notice ? { notice: extra.notice } : {}),
      ...(extra.error ? { error: extra.error } : {}),
      ...(extra.values ? { values: extra.values } : {}),
      ...(canManageWebhooks ? { githubSecrets: await githubSecretsOfServer(services, at.serverId) } : {}),
    });
    return sendHtml(reply, markup, extra.status ?? 200);
  }

  async function webhookOr404(at: Resolved, webhookId: string): Promise<Webhook> {
    const webhook = await findScopedWebhook(services, { serverId: at.serverId, channelId: at.scope.kind === 'channel' ? at.scope.channel.id : undefined }, webhookId);
    if (!webhook) throw ApiErrors.unknownWebhook();
    return webhook;
  }

  function issued(webhook: Webhook, token: string, regenerated: boolean): IssuedUrl {
    return { webhookId: webhook.id, name: webhook.name, url: webhookUrl(services.config.baseUrl, webhook.id, token), regenerated };
  }

  async function reveal(request: FastifyRequest, reply: FastifyReply, at: Resolved, url: IssuedUrl) {
    await holdOnce(services, request.sessionToken ?? '', `webhook-url:${at.base}`, url);
    return reply.redirect(`${at.base}#webhook-${url.webhookId}`, 303);
  }

  /** The handlers, for a way of resolving the scope from the request's parameters. */
  function routes(prefix: string, resolve: (params: Record<string, string>, viewerId: string, bits: bigint, forPage: boolean) => Promise<Resolved>, params: typeof IntegrationsServerParams | typeof IntegrationsChannelParams, webhookParams: typeof IntegrationsServerWebhookParams | typeof IntegrationsChannelWebhookParams) {
    /** The scope and the webhook named in the path, for the per-webhook forms (Manage webhooks). */
    async function openWebhook(request: FastifyRequest): Promise<{ at: Resolved; webhook: Webhook }> {
      const p = request.params as Record<string, string>;
      const at = await resolve(p, request.signedInViewer.id, Permission.MANAGE_WEBHOOKS, false);
      return { at, webhook: await webhookOr404(at, p['webhookId'] ?? '') };
    }

    pages.get(prefix, { schema: { ...hide, params, querystring: IntegrationsQuery } }, async (request, reply) => {
      const at = await resolve(request.params as Record<string, string>, request.signedInViewer.id, Permission.MANAGE_WEBHOOKS | Permission.MANAGE_SERVER, true);
      // A URL made by the create or regenerate form, once (reveals.service.ts): gone on reload.
      const shown = await takeOnce<IssuedUrl>(services, request.sessionToken, `webhook-url:${at.base}`);
      return render(request, reply, at, { notice: NOTICES[request.query.done ?? ''], ...(shown ? { issued: shown } : {}) });
    });

    pages.post(`${prefix}/webhooks`, { schema: { ...hide, params, body: WebhookFormBody } }, async (request, reply) => {
      const at = await resolve(request.params as Record<string, string>, request.signedInViewer.id, Permission.MANAGE_WEBHOOKS | Permission.VIEW_CHANNEL, false);
      const { name, avatarUrl, channelId } = request.body;
      try {
        const channel = at.scope.kind === 'channel' ? at.scope.channel : await channelOfServer(services, at.serverId, channelId);
        const created = await createWebhook(services, personActing(request, services.clock), channel, { name: name ?? '', avatarUrl: avatarUrl ?? null });
        // Post/redirect/get: the URL waits for the one GET that shows it; a reload creates nothing.
        return await reveal(request, reply, at, issued(created.webhook, created.token, false));
      } catch (error) {
        return render(request, reply, at, refused(error, 'create', { name, avatarUrl, channelId }));
      }
    });

    pages.post(`${prefix}/webhooks/:webhookId`, { schema: { ...hide, params: webhookParams, body: WebhookFormBody } }, async (request, reply) => {
      const { at, webhook } = await openWebhook(request);
      const { name, avatarUrl } = request.body;
      try {
        // Issue #42 §3: the page shows an uploaded avatar's URL field empty; empty keeps it (its own form removes it).
        const keepAvatar = (avatarUrl ?? '').trim() === '' && parseStoredImage(webhook.avatarUrl) !== undefined;
        await updateWebhookAs(services, personActing(request, services.clock), webhook.id, { name: name ?? '', ...(keepAvatar ? {} : { avatarUrl: avatarUrl ?? null }) });
      } catch (error) {
        return render(request, reply, at, refused(error, `rename-${webhook.id}`, { name, avatarUrl }));
      }
      return reply.redirect(`${at.base}?done=webhook-saved#webhook-${webhook.id}`, 303);
    });

    // Issue #23: the webhook's GitHub secret (compat-execute.service.ts); empty removes it.
    pages.post(`${prefix}/webhooks/:webhookId/github-secret`, { schema: { ...hide, params: webhookParams, body: GithubSecretFormBody } }, async (request, reply) => {
      const { at, webhook } = await openWebhook(request);
      try {
        await setGithubSecret(services, personActing(request, services.clock), webhook.id, request.body.githubSecret ?? '');
      } catch (error) {
        return render(request, reply, at, refused(error, `github-secret-${webhook.id}`, {}));
      }
      return reply.redirect(`${at.base}?done=github-secret-saved#webhook-${webhook.id}`, 303);
    });

    pages.get(`${prefix}/webhooks/:webhookId/regenerate`, { schema: { ...hide, params: webhookParams } }, async (request, reply) => {
      const { at, webhook } = await openWebhook(request);
      const channel = await getChannel(services, webhook.channelId);
      return sendHtml(reply, confirmRegeneratePage({ ctx: signedInContext(request, services), base: at.base, webhook, channelName: channel?.name ?? 'its channel' }));
    });

    pages.post(`${prefix}/webhooks/:webhookId/regenerate`, { schema: { ...hide, params: webhookParams, body: WebhookConfirmBody } }, async (request, reply) => {
      const { at, webhook } = await openWebhook(request);
      const regenerated = await regenerateWebhookTokenAs(services, personActing(request, services.clock), webhook.id);
      return reveal(request, reply, at, issued(regenerated.webhook, regenerated.token, true));
    });

    pages.get(`${prefix}/webhooks/:webhookId/delete`, { schema: { ...hide, params: webhookParams } }, async (request, reply) => {
      const { at, webhook } = await openWebhook(request);
      const channel = await getChannel(services, webhook.channelId);
      return sendHtml(reply, confirmDeletePage({ ctx: signedInContext(request, services), base: at.base, webhook, channelName: channel?.name ?? 'its channel' }));
    });

    pages.post(`${prefix}/webhooks/:webhookId/delete`, { schema: { ...hide, params: webhookParams, body: WebhookConfirmBody } }, async (request, reply) => {
      const { at, webhook } = await openWebhook(request);
      try {
        await deleteWebhookAs(services, personActing(request, services.clock), webhook.id);
      } catch (error) {
        // Deleted meanwhile (another tab): the outcome the person asked for.
        if (!(error instanceof ApiError) || error.code !== 10015) throw error;
      }
      return reply.redirect(`${at.base}?done=webhook-deleted`, 303);
    });
  }

  routes(
    '/servers/:serverId/settings/integrations',
    (params, viewerId, bits, forPage) => serverScope(params['serverId'] ?? '', viewerId, bits, forPage),
    IntegrationsServerParams,
    IntegrationsServerWebhookParams,
  );
  routes(
    '/channels/:channelId/settings/integrations',
    // The channel page has nothing but webhooks: Manage webhooks (and View channel) to open it.
    (params, viewerId, bits, forPage) => channelScope(params['channelId'] ?? '', viewerId, forPage ? Permission.MANAGE_WEBHOOKS | Permission.VIEW_CHANNEL : bits),
    IntegrationsChannelParams,
    IntegrationsChannelWebhookParams,
  );
}
