import type { FastifyReply, FastifyRequest } from 'fastify';
import { person, type Actor } from '../../core/actor.js';
import { ApiError } from '../../core/errors.js';
import { personActing } from '../../http/acting.js';
import type { App } from '../../http/app-type.js';
import type { Services } from '../../deps.js';
import { sendHtml, signedInContext, signedInPages } from '../../http/pages.js';
import { SCOPES } from '../../core/scopes.js';
import { Permission, type PermissionName } from '../../core/permissions.js';
import { redirectUrisFromText, type Application } from './applications.js';
import { generateInstallAwareLink, INSTALL_SCOPES } from './bots.js';
import { enableBot, findBotAccount, resetBotToken } from './bots.service.js';
import { listApplicationCommands, listGuildCommandsByServer } from './commands.service.js';
import { registerCommandsApi } from './commands.routes.js';
import { applicationPage, deleteApplicationPage, resetBotTokenPage, resetSecretPage, type BotSection } from './app-detail.page.js';
import { applicationsListPage, fieldMessages } from './portal.page.js';
import { permissionPicker, urlGeneratorPage } from './url-generator.page.js';
import { AppParams, BotSettingsBody, CreateAppBody, CsrfOnlyBody, DetailQuery, GeneralBody, ListQuery, OAuthSettingsBody, UrlGeneratorQuery } from './applications.schemas.js';
import {
  createApplication,
  deleteApplication,
  getManagedApplication,
  listOwnedApplications,
  resetClientSecret,
  updateApplication,
} from './applications.service.js';
import { openIdPortalView } from '../oidc/oidc.service.js';
import { listResourceServers } from '../resource-servers/resource-servers.service.js';
import { holdOnce, takeOnce } from '../reveals/reveals.service.js';
import { parseStoredImage } from '../resources/uploaded-images.js';

/** Page routes are HTML, not API: kept out of the OpenAPI document. */
const hide = { hide: true } as const;

/** A 50035 Invalid Form Body from a service: the form is shown again with its messages. */
function isFormError(error: unknown): error is ApiError {
  return error instanceof ApiError && error.code === 50035;
}

/** The Bot section's data: the bot account and the commands it registered, global and per server. */
async function botSection(services: Services, app: Application): Promise<BotSection> {
  const account = await findBotAccount(services, app);
  if (!account) return { account, commands: [], serverCommands: [] };
  const [commands, serverCommands] = await Promise.all([listApplicationCommands(services, app.id), listGuildCommandsByServer(services, app.id)]);
  return { account, commands, serverCommands };
}

/** The picker's ticked names as a bitfield; names that are not permissions are ignored. */
function pickedPermissions(names: readonly string[] | undefined): bigint {
  let bits = 0n;
  for (const name of names ?? []) if (Object.hasOwn(Permission, name)) bits |= Permission[name as PermissionName];
  return bits;
}

/** JSON API of applications: the commands API, with bot credentials (issue #4). */
export function registerApplicationApi(app: App, services: Services): void {
  registerCommandsApi(app, services);
}

/** The signed-in person, as the actor of the portal's services. */
function me(request: FastifyRequest): Actor {
  return person(request.signedInViewer.id);
}

/**
 * The developer portal under /developers (pages context: viewer + CSRF). Every page is for the
 * signed-in owner only (signedInPages); any other application id, malformed ones included, is a
 * 404 (getManagedApplication), for GET and POST alike.
 */
export function registerApplicationPages(pages: App, services: Services): void {
  pages.get('/developers', { schema: hide }, async (_request, reply) => reply.redirect('/developers/applications', 303));
  signedInPages(pages, (signedIn) => registerPortal(signedIn, services));
}

function registerPortal(pages: App, services: Services): void {
  /** The app page again with `extra` (a notice, a one-time secret, a refused form's messages). */
  async function detail(request: FastifyRequest, app: Application, extra: Omit<Parameters<typeof applicationPage>[0], 'ctx' | 'app' | 'bot'>): Promise<string> {
    return applicationPage({ ctx: signedInContext(request, services), app, ...extra, bot: await botSection(services, app) });
  }

  /** A one-time secret and its notice, shown by the one GET the form redirects to (reveals.service.ts). */
  interface Revealed {
    notice: string;
    newSecret?: string;
    newBotToken?: string;
  }
  async function reveal(request: FastifyRequest, reply: FastifyReply, appId: string, shown: Revealed, hash = '') {
    await holdOnce(services, request.sessionToken ?? '', `app-secret:${appId}`, shown);
    return reply.redirect(`/developers/applications/${appId}${hash}`, 303);
  }

  pages.get('/developers/applications', { schema: { ...hide, querystring: ListQuery } }, async (request, reply) => {
    const apps = await listOwnedApplications(services, request.signedInViewer.id);
    return sendHtml(reply, applicationsListPage({ ctx: signedInContext(request, services), apps, values: {}, errors: {}, deleted: request.query.deleted === '1' }));
  });

  pages.post('/developers/applications', { schema: { ...hide, body: CreateAppBody } }, async (request, reply) => {
    const body = request.body;
    const confidential = body.clientType !== 'public';
    try {
      const { application, clientSecret } = await createApplication(services, personActing(request, services.clock), { name: body.name ?? '', redirectUris: [], confidential });
      if (clientSecret === null) return reply.redirect(`/developers/applications/${application.id}?created=1`, 303);
      // Post/redirect/get: the secret waits for the one GET that shows it; a reload creates nothing.
      return await reveal(request, reply, application.id, { notice: 'Application created. Add its redirect URIs below.', newSecret: clientSecret });
    } catch (error) {
      if (!isFormError(error)) throw error;
      const apps = await listOwnedApplications(services, request.signedInViewer.id);
      const values = { name: body.name, clientType: body.clientType };
      return sendHtml(reply, applicationsListPage({ ctx: signedInContext(request, services), apps, values, errors: fieldMessages(error.errors) }), 400);
    }
  });

  pages.get('/developers/applications/:id', { schema: { ...hide, params: AppParams, querystring: DetailQuery } }, async (request, reply) => {
    const app = await getManagedApplication(services, me(request), request.params.id);
    const shown = await takeOnce<Revealed>(services, request.sessionToken, `app-secret:${app.id}`);
    const notice = shown?.notice ?? (request.query.created === '1' ? 'Application created. Add its redirect URIs below.' : request.query.saved === '1' ? 'Changes saved.' : undefined);
    const ctx = signedInContext(request, services);
    const openId = { ...(await openIdPortalView(services, app.id)), csrfToken: ctx.csrfToken };
    const resourceServers = { appId: app.id, csrfToken: ctx.csrfToken, servers: await listResourceServers(services, me(request), app.id) };
    const secrets = { ...(shown?.newSecret ? { newSecret: shown.newSecret } : {}), ...(shown?.newBotToken ? { newBotToken: shown.newBotToken } : {}) };
    return sendHtml(reply, applicationPage({ ctx, app, notice, ...secrets, bot: await botSection(services, app), openId, resourceServers }));
  });

  pages.post('/developers/applications/:id', { schema: { ...hide, params: AppParams, body: GeneralBody } }, async (request, reply) => {
    const body = request.body;
    try {
      // Issue #42 §3: the page shows an uploaded icon's URL field empty; empty keeps it (its own form removes it).
      const current = await getManagedApplication(services, me(request), request.params.id);
      const keepIcon = (body.iconUrl ?? '').trim() === '' && parseStoredImage(current.iconUrl) !== undefined;
      await updateApplication(services, personActing(request, services.clock), request.params.id, { name: body.name ?? '', description: body.description ?? '', ...(keepIcon ? {} : { iconUrl: body.iconUrl ?? '' }) });
      return reply.redirect(`/developers/applications/${request.params.id}?saved=1`, 303);
    } catch (error) {
      if (!isFormError(error)) throw error;
      const app = await getManagedApplication(services, me(request), request.params.id);
      const general = { name: body.name, description: body.description, iconUrl: body.iconUrl };
      return sendHtml(reply, await detail(request, app, { general, generalErrors: fieldMessages(error.errors) }), 400);
    }
  });

  pages.post('/developers/applications/:id/oauth2', { schema: { ...hide, params: AppParams, body: OAuthSettingsBody } }, async (request, reply) => {
    const text = request.body.redirectUris ?? '';
    try {
      await updateApplication(services, personActing(request, services.clock), request.params.id, { redirectUris: redirectUrisFromText(text) });
      return reply.redirect(`/developers/applications/${request.params.id}?saved=1#oauth2`, 303);
    } catch (error) {
      if (!isFormError(error)) throw error;
      const app = await getManagedApplication(services, me(request), request.params.id);
      return sendHtml(reply, await detail(request, app, { redirectUrisText: text, oauthErrors: fieldMessages(error.errors) }), 400);
    }
  });

  pages.get('/developers/applications/:id/reset-secret', { schema: { ...hide, params: AppParams } }, async (request, reply) => {
    const app = await getManagedApplication(services, me(request), request.params.id);
    if (!app.confidential) return reply.redirect(`/developers/applications/${app.id}`, 303);
    return sendHtml(reply, resetSecretPage({ ctx: signedInContext(request, services), app }));
  });

  pages.post('/developers/applications/:id/reset-secret', { schema: { ...hide, params: AppParams, body: CsrfOnlyBody } }, async (request, reply) => {
    const app = await getManagedApplication(services, me(request), request.params.id);
    const secret = await resetClientSecret(services, personActing(request, services.clock), app.id);
    return reveal(request, reply, app.id, { notice: 'The client secret was reset. The previous secret no longer works.', newSecret: secret });
  });

  pages.post('/developers/applications/:id/bot', { schema: { ...hide, params: AppParams, body: CsrfOnlyBody } }, async (request, reply) => {
    const app = await getManagedApplication(services, me(request), request.params.id);
    // A second click (or a reload) finds the bot there: back to the page, no second token.
    if (app.botUserId !== null) return reply.redirect(`/developers/applications/${app.id}#bot`, 303);
    const { token } = await enableBot(services, personActing(request, services.clock), app.id);
    return reveal(request, reply, app.id, { notice: 'Bot added. Copy its token now.', newBotToken: token }, '#bot');
  });

  pages.get('/developers/applications/:id/bot/reset-token', { schema: { ...hide, params: AppParams } }, async (request, reply) => {
    const app = await getManagedApplication(services, me(request), request.params.id);
    if (app.botUserId === null) return reply.redirect(`/developers/applications/${app.id}#bot`, 303);
    return sendHtml(reply, resetBotTokenPage({ ctx: signedInContext(request, services), app }));
  });

  pages.post('/developers/applications/:id/bot/reset-token', { schema: { ...hide, params: AppParams, body: CsrfOnlyBody } }, async (request, reply) => {
    const app = await getManagedApplication(services, me(request), request.params.id);
    if (app.botUserId === null) return reply.redirect(`/developers/applications/${app.id}#bot`, 303);
    const token = await resetBotToken(services, personActing(request, services.clock), app.id);
    return reveal(request, reply, app.id, { notice: 'The bot token was reset. The previous token no longer works.', newBotToken: token }, '#bot');
  });

  pages.post('/developers/applications/:id/bot/settings', { schema: { ...hide, params: AppParams, body: BotSettingsBody } }, async (request, reply) => {
    const changes = { botPublic: request.body.botPublic === 'on', botRequireCodeGrant: request.body.botRequireCodeGrant === 'on' };
    const app = await updateApplication(services, personActing(request, services.clock), request.params.id, changes);
    return reply.redirect(`/developers/applications/${app.id}?saved=1#bot`, 303);
  });

  pages.get('/developers/applications/:id/delete', { schema: { ...hide, params: AppParams } }, async (request, reply) => {
    const app = await getManagedApplication(services, me(request), request.params.id);
    return sendHtml(reply, deleteApplicationPage({ ctx: signedInContext(request, services), app }));
  });

  pages.post('/developers/applications/:id/delete', { schema: { ...hide, params: AppParams, body: CsrfOnlyBody } }, async (request, reply) => {
    await deleteApplication(services, personActing(request, services.clock), request.params.id);
    return reply.redirect('/developers/applications?deleted=1', 303);
  });

  pages.get('/developers/applications/:id/oauth2/url-generator', { schema: { ...hide, params: AppParams, querystring: UrlGeneratorQuery } }, async (request, reply) => {
    const app = await getManagedApplication(services, me(request), request.params.id);
    const query = request.query;
    // Scopes the authorize endpoint accepts today; bot and applications.commands join when the
    // bot issue marks them accepted in core/scopes.ts.
    const offered = SCOPES.filter((s) => s.accepted);
    const offersInstall = offered.some((s) => INSTALL_SCOPES.includes(s.name));
    const offersBot = offered.some((s) => s.name === 'bot');
    const permissions = pickedPermissions(query.permission);
    const submitted = query.scope !== undefined || query.redirect_uri !== undefined || query.state !== undefined || query.permission !== undefined;
    const result = generateInstallAwareLink(
      services.config.baseUrl,
      app,
      offered.map((s) => s.name),
      { scopes: query.scope ?? [], redirectUri: query.redirect_uri, state: query.state, permissions },
    );
    return sendHtml(
      reply,
      urlGeneratorPage({
        ctx: signedInContext(request, services),
        app,
        scopes: offered,
        selectedScopes: result.scopes,
        redirectUri: result.redirectUri,
        state: query.state ?? '',
        link: submitted ? result.link : undefined,
        problems: result.problems,
        submitted,
        ...(offersBot ? { extraFields: permissionPicker(permissions) } : {}),
        installWithoutRedirect: offersInstall,
      }),
    );
  });
}
