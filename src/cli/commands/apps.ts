import { cliActing } from '../../core/acting.js';
import { ApiError } from '../../core/errors.js';
import type { Services } from '../../deps.js';
import type { Application } from '../../modules/applications/applications.js';
import { createApplication, findOwnerByUsername } from '../../modules/applications/applications.service.js';
import { APPS_PAGE_MAX, deleteAppAsOperator, disableApp, enableApp, listApps, showApp, type AppImpact } from '../../modules/applications/apps-admin.service.js';
import { enableBot } from '../../modules/applications/bots.service.js';
import type { Person } from '../../modules/directory/people.js';
import { isRegisteredApplication } from '../../modules/client-registration/client-registration.js';
import type { Webhook } from '../../modules/webhooks/webhooks.js';
import type { CliCommand, ParsedFlags } from '../command.js';
import { confirmDestructive, pageLimit, YES_FLAG } from '../confirm.js';

/** `gatehouse apps …` (DESIGN §8). */
export const appsCommands: CliCommand[] = [
  {
    name: 'apps create',
    summary: 'register an OAuth2 application; prints its client id and (once) its client secret and bot token',
    flags: {
      owner: { description: 'username of the person who owns the application', required: true },
      name: { description: '2–32 characters, shown on the consent screen', required: true },
      'redirect-uri': { description: 'an exact redirect URI (https, or http://127.0.0.1 / http://[::1])', repeatable: true },
      public: { description: 'a public client: no client secret, PKCE S256 required', boolean: true },
      description: { description: 'up to 400 characters' },
      'private-bot': { description: 'only the owner may install the bot', boolean: true },
      'require-code-grant': { description: 'bot installs need the full authorization code flow', boolean: true },
      bot: { description: 'also add the bot account; prints bot_user_id and (once) bot_token', boolean: true },
    },
    async run(services, flags) {
      const owner = await findOwnerByUsername(services, flags.string('owner') ?? '');
      // The same rules as the portal: a bad value exits non-zero with every field error.
      const { application, clientSecret } = await createApplication(services, cliActing(services.clock), {
        ownerId: owner.id,
        name: flags.string('name') ?? '',
        description: flags.string('description') ?? '',
        redirectUris: flags.list('redirect-uri'),
        confidential: !flags.bool('public'),
        botPublic: !flags.bool('private-bot'),
        botRequireCodeGrant: flags.bool('require-code-grant'),
      });
      // The bot token exists in plaintext only in this output: only its hash is stored.
      const bot = flags.bool('bot') ? await enableBot(services, cliActing(services.clock), application.id) : undefined;
      // DESIGN §8: the API's field names (snake_case, as docs/api-resources.md).
      return {
        id: application.id,
        client_id: application.id,
        client_secret: clientSecret,
        name: application.name,
        redirect_uris: application.redirectUris,
        confidential: application.confidential,
        bot_public: application.botPublic,
        bot_require_code_grant: application.botRequireCodeGrant,
        ...(bot ? { bot_user_id: bot.botUserId, bot_token: bot.token } : {}),
      };
    },
  },
  ...operatorCommands(),
];

/** Issue #39: an unknown --app is said plainly (exit status 1), naming the flag. */
async function withApp<T>(appId: string, work: (appId: string) => Promise<T>): Promise<T> {
  try {
    return await work(appId);
  } catch (error) {
    if (error instanceof ApiError && error.code === 10002) throw new Error(`--app: no application has the id "${appId}"`);
    throw error;
  }
}

function appId(flags: ParsedFlags): string {
  return flags.string('app') ?? '';
}

/** An app as the operator's commands print it (the API's field names, DESIGN §8). */
function appRecord(app: Application, owner: Person | undefined): Record<string, unknown> {
  return {
    id: app.id,
    name: app.name,
    owner_id: app.ownerId,
    owner_username: owner?.username ?? null,
    confidential: app.confidential,
    // Issue #41 §3: registered by itself (RFC 7591), not reviewed by anyone.
    registered: isRegisteredApplication(app),
    bot_user_id: app.botUserId,
    disabled: app.disabledAt !== null,
    disabled_at: app.disabledAt === null ? null : new Date(app.disabledAt).toISOString(),
    disabled_reason: app.disabledReason,
    created_at: new Date(app.createdAt).toISOString(),
  };
}

function webhookRecords(webhooks: readonly Webhook[]): Array<Record<string, unknown>> {
  return webhooks.map((w) => ({ id: w.id, name: w.name, guild_id: w.serverId, channel_id: w.channelId }));
}

function impactRecord(impact: AppImpact): Record<string, unknown> {
  return {
    grants: impact.grants,
    grant_people: impact.grantPeople,
    server_installs: impact.serverInstalls,
    user_installs: impact.userInstalls,
    incoming_webhooks: webhookRecords(impact.incomingWebhooks),
  };
}

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

function webhookList(webhooks: readonly Webhook[]): string {
  return webhooks.length === 0 ? '' : `: ${webhooks.map((w) => `${w.name} (${w.id}, channel ${w.channelId})`).join(', ')}`;
}

async function shown(services: Services, id: string) {
  return withApp(id, (app) => showApp(services, { kind: 'operator' }, app));
}

/** `gatehouse apps list|show|disable|enable|delete` (issue #39; docs/operations.md "Apps and servers"). */
function operatorCommands(): CliCommand[] {
  const app = { app: { description: 'application (client) id', required: true } };
  return [
    {
      name: 'apps list',
      summary: 'list applications, oldest first (paged: --after the last id shown)',
      flags: {
        owner: { description: 'only the applications of this username' },
        disabled: { description: 'only disabled applications', boolean: true },
        after: { description: 'the next page: applications after this id (next_after of the previous page)' },
        limit: { description: `at most this many (1–${APPS_PAGE_MAX}, default ${APPS_PAGE_MAX})` },
      },
      async run(services, flags) {
        const page = await listApps(services, { kind: 'operator' }, { owner: flags.string('owner'), disabled: flags.bool('disabled'), after: flags.string('after'), limit: pageLimit(flags, APPS_PAGE_MAX) });
        return { count: page.apps.length, apps: page.apps.map((a) => appRecord(a.application, a.owner)), next_after: page.next ?? null };
      },
    },
    {
      name: 'apps show',
      summary: 'one application: its owner, state, and what disabling or deleting it affects',
      flags: app,
      async run(services, flags) {
        const found = await shown(services, appId(flags));
        return { ...appRecord(found.application, found.owner), redirect_uris: found.application.redirectUris, bot_public: found.application.botPublic, ...impactRecord(found.impact) };
      },
    },
    {
      name: 'apps disable',
      summary: 'disable an application: revokes its tokens, its bot stops authenticating, its consent screen says it is unavailable',
      flags: { ...app, reason: { description: 'why (kept in the audit log and shown by apps show)' }, ...YES_FLAG },
      async run(services, flags) {
        const found = await shown(services, appId(flags));
        const i = found.impact;
        if (found.application.disabledAt === null) {
          await confirmDestructive(
            `Disabling ${found.application.name} (${found.application.id}) revokes ${plural(i.grants, 'authorization')} of ${plural(i.grantPeople, 'person', 'people')} (their access and refresh tokens stop working; enabling does not bring them back) and stops its bot in ${plural(i.serverInstalls, 'server')}. Installs and webhooks stay.`,
            flags.bool('yes'),
          );
        }
        const done = await withApp(found.application.id, (id) => disableApp(services, cliActing(services.clock, flags.string('reason') ?? null), id));
        return { ...appRecord(done.application, found.owner), changed: done.changed, revoked_grants: done.revokedGrants };
      },
    },
    {
      name: 'apps enable',
      summary: 'enable a disabled application: its bot and consent screen work again (revoked tokens stay revoked)',
      flags: app,
      async run(services, flags) {
        const done = await withApp(appId(flags), (id) => enableApp(services, cliActing(services.clock), id));
        return { ...appRecord(done.application, undefined), changed: done.changed };
      },
    },
    {
      name: 'apps delete',
      summary: 'delete an application for good, with its tokens, installs and the webhooks it created through webhook.incoming',
      flags: { ...app, ...YES_FLAG },
      async run(services, flags) {
        const found = await shown(services, appId(flags));
        const i = found.impact;
        await confirmDestructive(
          `Deleting ${found.application.name} (${found.application.id}) removes ${plural(i.grants, 'authorization')} of ${plural(i.grantPeople, 'person', 'people')} with their tokens, its bot from ${plural(i.serverInstalls, 'server')}, ${plural(i.userInstalls, "person's install", "people's installs")}, and ${plural(i.incomingWebhooks.length, 'webhook')} created through webhook.incoming${webhookList(i.incomingWebhooks)}. Webhooks its bot created stay. This cannot be undone.`,
          flags.bool('yes'),
        );
        const deleted = await withApp(found.application.id, (id) => deleteAppAsOperator(services, cliActing(services.clock), id));
        return {
          id: deleted.application.id,
          name: deleted.application.name,
          deleted: true,
          removed: { grants: i.grants, grant_people: i.grantPeople, server_installs: deleted.serverIds.length, user_installs: i.userInstalls, incoming_webhooks: webhookRecords(deleted.webhooks) },
        };
      },
    },
  ];
}
