import { confirmationPage } from '../../web/confirm.page.js';
import type { PageCtx } from '../../web/components.js';
import { html } from '../../web/html.js';
import { integrationsPath } from './installs.page.js';
import type { InstalledApp } from './installs.js';

/** "Remove … from this server?" (issue #24): the bot leaves, its role goes, its webhooks stay. */
export function confirmBotRemovePage(ctx: PageCtx, serverId: string, app: InstalledApp): string {
  const name = app.application.name;
  return confirmationPage(ctx, {
    question: `Remove ${name} from this server?`,
    consequence: html`Its bot leaves the server at once and its role (${app.permissions.labels.length ? app.permissions.labels.join(', ') : 'no permissions'}) is deleted${
      app.commandsEnabled ? ', with its commands here' : ''
    }. Messages and webhooks it created stay until you delete them. Adding it again needs a new authorization.`,
    action: `${integrationsPath(serverId)}/apps/${app.application.id}/remove`,
    button: `Remove ${name}`,
    cancel: `${integrationsPath(serverId)}#app-${app.application.id}`,
  });
}

/** "Remove … from your apps?": its bot can no longer message you directly. */
export function confirmUserInstallRemovePage(ctx: PageCtx, app: { applicationId: string; name: string }): string {
  return confirmationPage(ctx, {
    question: `Remove ${app.name} from your apps?`,
    consequence: html`Its bot can no longer send you direct messages, unless it is in a server you joined yourself. Messages it already sent stay.`,
    action: `/settings/apps/${app.applicationId}/remove`,
    button: `Remove ${app.name}`,
    cancel: '/settings/apps',
  });
}
