import { recordAuditLog } from './modules/audit/audit.service.js';
import { registerAuditApi, registerAuditPages } from './modules/audit/audit.routes.js';
import Fastify, { LogController, type FastifyBaseLogger } from 'fastify';
import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { App } from './http/app-type.js';
import { frameworkErrorRenderer, installErrorHandling } from './http/error-handler.js';
import { installExactJsonContentType, rewriteEncodedAtMe } from './http/discord-wire.js';
import { installStrictJsonParser } from './http/json-body.js';
import { PAGE_BODY_LIMIT, parseForm } from './http/body-limits.js';
import { lazySchemaController } from './http/lazy-schemas.js';
import { lazyChildLoggerFactory } from './http/logging.js';
import { installAccessLog } from './http/access-log.js';
import { installRequestMetrics } from './http/metrics.js';
import { installSecurityHeaders } from './http/security-headers.js';
import { documentedRoutesOnly, registerOpenApiRoutes } from './http/openapi.routes.js';
import { registerOperationsRoutes } from './http/operations.routes.js';
import { installTextRule } from './http/text-rule.js';
import { registerAccountPages } from './modules/accounts/accounts.routes.js';
import { registerPasskeyPages } from './modules/accounts/passkeys.routes.js';
import { registerSessionPages } from './modules/accounts/sessions.routes.js';
import { registerAccountDeletionPages } from './modules/accounts/account-deletion.routes.js';
import { registerAdminPages } from './modules/admin/admin.routes.js';
import { startMailWorker } from './modules/mail/mail.service.js';
import { recordAppEvents, startAppEventWorker } from './modules/app-events/app-events.service.js';
import { registerAppEventsApi, registerAppEventsPages } from './modules/app-events/app-events.routes.js';
import { registerInteractionsApi } from './modules/interactions/interactions.routes.js';
import { registerApplicationApi, registerApplicationPages } from './modules/applications/applications.routes.js';
import { registerInstallPages } from './modules/applications/installs.routes.js';
import { registerDirectoryPages } from './modules/directory/directory.routes.js';
import { registerLivePages } from './modules/messages/live.routes.js';
import { registerMessagePages, registerMessagePostPage } from './modules/messages/messages.routes.js';
import { registerMessageActionPages } from './modules/messages/message-actions.routes.js';
import { registerBotMessageApi } from './modules/messages/bot-messages.routes.js';
import { registerGuildApi } from './modules/directory/guilds.routes.js';
import { registerBotReadApi } from './modules/messages/bot-reads.routes.js';
import { registerDmApi, registerDmPages } from './modules/messages/dms.routes.js';
import { registerUserInstallPages } from './modules/applications/user-installs.routes.js';
import { registerOAuthApi, registerOAuthPages } from './modules/oauth/oauth.routes.js';
import { registerOpenIdApi, registerOpenIdPages } from './modules/oidc/oidc.routes.js';
import { registerResourceServerPages } from './modules/resource-servers/resource-servers.routes.js';
import { registerClientRegistrationApi } from './modules/client-registration/client-registration.routes.js';
import { registerWebhookExecuteApi } from './modules/webhooks/execute.routes.js';
import { registerWebhookManagementApi } from './modules/webhooks/webhooks.routes.js';
import { registerWebhookPages } from './modules/webhooks/webhooks-pages.routes.js';
import { registerImageUploadApi, registerImageUploadPages } from './modules/resources/image-upload.routes.js';
import { registerCdnRoutes } from './modules/resources/cdn.routes.js';
import { registerFileRoutes } from './modules/files/files.routes.js';
import { installMultipart } from './modules/files/multipart.routes.js';
import type { Services } from './services.js';
import { ASSETS } from './web/assets.js';
import { installPageContext, viewerIdentifier } from './modules/accounts/page-context.hook.js';


/**
 * Builds the application from its services; never listens (DESIGN §9.1), so tests drive it with
 * inject() and main.ts decides where it listens. Every module is registered here, by hand.
 */
/**
 * `appEventPollMs`: the app-event worker's longest sleep between rounds (APP_EVENT_FALLBACK_POLL_MS);
 * `appEventFirstRoundMs`: when its start-up round runs (at once unless set).
 */
export async function buildApp(services: Services, options: { appEventPollMs?: number; appEventFirstRoundMs?: number } = {}): Promise<App> {
  const { config } = services;
  const app: App = Fastify({
    loggerInstance: services.logger as FastifyBaseLogger,
    // A request's child logger only when it logs something (src/http/logging.ts, DESIGN §5).
    childLoggerFactory: lazyChildLoggerFactory,
    // One access line per request instead of Fastify's two (src/http/access-log.ts, issue #26 §0).
    logController: new LogController({ disableRequestLogging: true }),
    trustProxy: config.trustProxy === false ? false : config.trustProxy,
    bodyLimit: config.bodyLimit,
    // Issue #21 §1: a request whose headers or body trickle in is ended (408) instead of holding
    // its connection for ever; node:http checks every second instead of every 30 s.
    requestTimeout: config.requestTimeoutMs,
    http: { headersTimeout: config.headersTimeoutMs, connectionsCheckingInterval: 1000 },
    // Request ids: honour a proxy's X-Request-Id, else generate one; echoed in the response.
    requestIdHeader: 'x-request-id',
    routerOptions: { ignoreTrailingSlash: false, maxParamLength: 200 },
    // DESIGN §1: `/users/%40me` is `/users/@me` (src/http/discord-wire.ts).
    rewriteUrl: rewriteEncodedAtMe,
    ajv: { customOptions: { allErrors: true, coerceTypes: 'array', removeAdditional: false } },
    // Route schemas compile on first use: a crashed server serves again sooner (src/http/lazy-schemas.ts).
    schemaController: lazySchemaController(),
    frameworkErrors: frameworkErrorRenderer(config.serviceName),
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.decorateRequest('viewer', undefined);
  app.decorateRequest('csrfKey', undefined);
  app.decorateRequest('sessionToken', undefined);
  app.decorateRequest('signedInAt', undefined);
  app.decorateRequest('bot', undefined);
  app.decorateRequest('bearer', undefined);

  // Issue #37 §5: the audit log hears the domain events of every service this app calls.
  recordAuditLog(services);
  // Issue #38 §1: with GATEHOUSE_SMTP_URL, this instance's worker sends the queued mail (leases keep
  // several instances from sending one twice); it stops with the app.
  const mailWorker = startMailWorker(services, `instance ${services.workerId} ${services.random.bytes(6).toString('hex')}`);
  if (mailWorker) app.addHook('onClose', () => mailWorker.stop());
  // Issue #40 §1: app events are queued in their change's transaction, and this instance's worker
  // delivers them (leases keep several instances from sending one twice); it stops with the app.
  recordAppEvents(services);
  const appEventWorker = startAppEventWorker(services, `instance ${services.workerId} ${services.random.bytes(6).toString('hex')}`, {
    ...(options.appEventPollMs === undefined ? {} : { intervalMs: options.appEventPollMs }),
    ...(options.appEventFirstRoundMs === undefined ? {} : { firstRoundAfterMs: options.appEventFirstRoundMs }),
  });
  app.addHook('onClose', () => appEventWorker.stop());

  const identifyViewer = viewerIdentifier(services);
  installErrorHandling(app, config.serviceName, identifyViewer);
  installStrictJsonParser(app);
  installExactJsonContentType(app);
  installRequestMetrics(app, services.metrics);
  installAccessLog(app, services.logger);
  // Linear, with a bounded field count (src/http/body-limits.ts).
  await app.register(formbody, { parser: parseForm });
  // Issue #21 §5: no field of any route may carry a NUL or another control character.
  installTextRule(app);
  // Helmet's headers, computed once instead of per request (src/http/security-headers.ts, DESIGN §5).
  await installSecurityHeaders(app, {
    // DESIGN §4: strict CSP, no inline script; frame-ancestors 'none' (OAUTH-CHECKLIST A15).
    // No form-action: browsers apply it to the redirect after the consent form, which must reach
    // the app's registered redirect URI.
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'none'"],
        scriptSrc: ["'self'"],
        styleSrc: ["'self'"],
        imgSrc: ["'self'", 'https:', 'data:'],
        connectSrc: ["'self'"],
        fontSrc: ["'self'"],
        baseUri: ["'none'"],
        frameAncestors: ["'none'"],
      },
    },
    frameguard: { action: 'deny' },
    referrerPolicy: { policy: 'no-referrer' },
    // Avatars and icons are https images from anywhere; COEP would block them.
    crossOriginEmbedderPolicy: false,
    hsts: config.secureCookies ? { maxAge: 31536000, includeSubDomains: false } : false,
  });
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: `${config.serviceName} API`, version: '1', description: 'OAuth 2.0 authorization, identity, bots and incoming webhooks.' },
      servers: [{ url: config.baseUrl }],
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', description: 'OAuth2 access token' },
          bot: { type: 'apiKey', in: 'header', name: 'Authorization', description: '"Bot <token>"' },
        },
      },
    },
    transform: documentedRoutesOnly,
  });

  for (const asset of ASSETS) {
    app.get(asset.path, { schema: { hide: true } }, async (_request, reply) =>
      reply.type(asset.type).header('Cache-Control', 'public, max-age=31536000, immutable').send(asset.body),
    );
  }

  // Browsers ask for /favicon.ico on every site; answer "no icon" instead of a logged 404.
  app.get('/favicon.ico', { schema: { hide: true } }, async (_request, reply) => reply.code(204).header('Cache-Control', 'public, max-age=86400').send());
  registerOperationsRoutes(app, services);
  registerOpenApiRoutes(app, { serviceName: services.config.serviceName, identifyViewer });
  registerApplicationApi(app, services);
  registerAppEventsApi(app, services);
  registerInteractionsApi(app, services);
  registerOAuthApi(app, services);
  registerClientRegistrationApi(app, services);
  registerOpenIdApi(app, services);
  // Issue #42 §2: the routes that take files, with the multipart parser (files/multipart.routes.ts) in a
  // context of their own, so its hooks run for them only.
  await app.register(async (withFiles) => {
    await installMultipart(withFiles);
    registerWebhookExecuteApi(withFiles, services);
    registerBotMessageApi(withFiles, services);
  });
  registerFileRoutes(app, services);
  registerWebhookManagementApi(app, services);
  registerDmApi(app, services);
  registerGuildApi(app, services);
  registerBotReadApi(app, services);
  registerCdnRoutes(app, services);
  registerImageUploadApi(app, services);
  registerAuditApi(app, services);

  await app.register(async (pages) => {
    // Only pages read or set cookies (sessions, CSRF); the API authenticates with headers, so its
    // requests skip the cookie plugin's two hooks (docs/performance.md §Request hooks).
    await pages.register(cookie);
    // Issue #21 §1: pages take only small form bodies. Anything else is refused from its headers
    // (415, 413) before a byte of it is parsed, since the session and CSRF checks come later.
    const pageBodyLimit = Math.min(PAGE_BODY_LIMIT, config.bodyLimit);
    pages.removeAllContentTypeParsers();
    pages.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: pageBodyLimit }, (_request, body, done) => {
      done(null, parseForm(body as string));
    });
    pages.addHook('onRoute', (route) => {
      route.bodyLimit ??= pageBodyLimit;
    });
    installPageContext(pages, services);
    registerAccountPages(pages, services);
    registerPasskeyPages(pages, services);
    registerSessionPages(pages, services);
    registerAccountDeletionPages(pages, services);
    registerDirectoryPages(pages, services);
    registerMessagePages(pages, services);
    registerMessageActionPages(pages, services);
    registerLivePages(pages, services);
    registerApplicationPages(pages, services);
    registerAppEventsPages(pages, services);
    registerOAuthPages(pages, services);
    registerOpenIdPages(pages, services);
    registerResourceServerPages(pages, services);
    registerUserInstallPages(pages, services);
    registerDmPages(pages, services);
    registerInstallPages(pages, services);
    registerWebhookPages(pages, services);
    registerAuditPages(pages, services);
    registerAdminPages(pages, services);
  });
  // Issue #42: the pages that post files (the composer, §2; the avatar and icon forms, §3) have a
  // pages context of their own (cookies, session, CSRF) with the multipart parser besides the
  // small-form one; the context above refuses multipart bodies. A small form posted here still
  // meets the CSRF check (403), not a 415.
  const pageBodyLimit = Math.min(PAGE_BODY_LIMIT, config.bodyLimit);
  for (const registerPages of [registerMessagePostPage, registerImageUploadPages]) {
    await app.register(async (withFiles) => {
      await withFiles.register(cookie);
      withFiles.removeAllContentTypeParsers();
      withFiles.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: pageBodyLimit }, (_request, body, done) => {
        done(null, parseForm(body as string));
      });
      await installMultipart(withFiles);
      installPageContext(withFiles, services);
      registerPages(withFiles, services);
    });
  }

  await app.ready();
  return app;
}
