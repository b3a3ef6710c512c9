import type { Actor } from '../../core/actor.js';
import { isSnowflake } from '../../core/snowflake.js';
import type { Services } from '../../deps.js';
import type { App } from '../../http/app-type.js';
import { apiErrorResponses } from '../../http/error.schemas.js';
import { RateLimitedBody } from '../webhooks/webhooks.schemas.js';
import { actorOf, sendHtml, signedInContext, signedInPages } from '../../http/pages.js';
import { botOf, requireBot } from '../applications/bot-auth.routes.js';
import { settingsAbilities } from '../directory/server-settings.js';
import { AUDIT_PAGE_SIZE, securityPage, serverAuditLogPage } from './audit.page.js';
import { AUDIT_LOG_LIMIT_DEFAULT, AuditLogBody, AuditLogQuery, AuditPageParams, AuditPageQuery, GuildParams, SecurityPageQuery } from './audit.schemas.js';
import { auditLogView, readSecurityLog, readServerAuditLog } from './audit.service.js';
import { presentAuditLog } from './audit-wire.js';
import { isServerAction } from './audit-words.js';
import { secondFactorSection } from '../mfa/mfa.page.js';
import { secondFactorStatus } from '../mfa/mfa.service.js';
import { passkeysSection } from '../accounts/passkeys.page.js';
import { passkeysOf } from '../accounts/passkeys.service.js';

/**
 * The audit log's read side (issue #37 §5; docs/audit-log.md): Discord's
 * GET /api/v1/guilds/{guild_id}/audit-logs with bot credentials (View audit log), Server settings
 * → Audit log, and Settings → Security. The operator reads it with `gatehouse audit list`.
 */
export function registerAuditApi(app: App, services: Services): void {
  const baseUrl = services.config.baseUrl;
  app.get(
    '/api/v1/guilds/:guildId/audit-logs',
    {
      onRequest: requireBot(services),
      schema: {
        tags: ['Audit log'],
        summary: "Read a server's audit log",
        description:
          "Discord's GET /guilds/{guild.id}/audit-logs: the server's entries that have one of Discord's action types, newest first, with the users, webhooks and apps (integrations) they name. Needs View audit log (403 50013); a server the bot is not in: 404 10004. Filters user_id, action_type, before, after (entry ids), limit 1–100 (default 50); any other query parameter is refused (400 50035). Addresses and request ids are not shown: they are the operator's (gatehouse audit list).",
        security: [{ bot: [] }],
        params: GuildParams,
        querystring: AuditLogQuery,
        response: { 200: AuditLogBody, ...apiErrorResponses(400, 401, 403, 404), 429: RateLimitedBody },
      },
    },
    async (request) => {
      const bot = botOf(request);
      const actor: Actor = { kind: 'bot', id: bot.botUserId, applicationId: bot.application.id };
      const q = request.query;
      const log = await readServerAuditLog(services, actor, request.params.guildId, {
        limit: q.limit ?? AUDIT_LOG_LIMIT_DEFAULT,
        discordOnly: true,
        ...(q.user_id !== undefined ? { userId: q.user_id } : {}),
        ...(q.action_type !== undefined ? { actionType: q.action_type } : {}),
        ...(q.before !== undefined ? { before: q.before } : {}),
        ...(q.after !== undefined ? { after: q.after } : {}),
      });
      return presentAuditLog(log, baseUrl);
    },
  );
}

export function registerAuditPages(pages: App, services: Services): void {
  signedInPages(pages, (signedIn) => {
    // Server settings → Audit log: View audit log (the owner holds it); 404 for a non-member, 403 without it.
    signedIn.get('/servers/:serverId/settings/audit-log', { schema: { hide: true, params: AuditPageParams, querystring: AuditPageQuery } }, async (request, reply) => {
      const personText = (request.query.person ?? '').trim();
      const action = request.query.action !== undefined && isServerAction(request.query.action) ? request.query.action : '';
      const before = request.query.before !== undefined && isSnowflake(request.query.before) ? request.query.before : undefined;
      const view = await auditLogView(services, actorOf(request), request.params.serverId, { person: personText, action, before, limit: AUDIT_PAGE_SIZE });
      const markup = serverAuditLogPage({
        ctx: signedInContext(request, services),
        server: view.server,
        can: settingsAbilities(view.permissions),
        entries: view.entries,
        names: view.names,
        members: view.members,
        filter: { person: personText, action, before },
        next: view.next,
        ...(view.unknownPerson ? { problem: `No one is called “${personText}”.` } : {}),
      });
      return sendHtml(reply, markup);
    });

    // Settings → Security: the signed-in person's own security events.
    signedIn.get('/settings/security', { schema: { hide: true, querystring: SecurityPageQuery } }, async (request, reply) => {
      const before = request.query.before !== undefined && isSnowflake(request.query.before) ? request.query.before : undefined;
      const log = await readSecurityLog(services, request.signedInViewer.id, { limit: AUDIT_PAGE_SIZE, ...(before !== undefined ? { before } : {}) });
      const ctx = signedInContext(request, services);
      const passkeys = passkeysSection({ csrfToken: ctx.csrfToken, passkeys: await passkeysOf(services, request.signedInViewer.id), errors: {} });
      const twoFactor = secondFactorSection(ctx, await secondFactorStatus(services, request.signedInViewer.id));
      return sendHtml(reply, securityPage({ ctx, entries: log.entries, apps: log.apps, before, next: log.next, twoFactor, passkeys }));
    });
  });
}
