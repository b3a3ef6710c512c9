import { confirmationPage } from '../../web/confirm.page.js';
import type { PageCtx } from '../../web/components.js';
import { html } from '../../web/html.js';
import type { Channel } from './channels.js';
import type { Person } from './people.js';

/** The confirmations of server settings (issue #24): each says what goes before anything does. */

function plural(n: number, one: string, many: string): string {
  return `${n.toLocaleString('en')} ${n === 1 ? one : many}`;
}

/** "Delete # general?": the channel and every message in it, with their number. */
export function confirmChannelDeletePage(ctx: PageCtx, serverId: string, preview: { channel: Channel; messages: number }): string {
  const { channel, messages } = preview;
  const here = `/servers/${serverId}/channels/${channel.id}/delete`;
  return confirmationPage(ctx, {
    question: `Delete # ${channel.name}?`,
    consequence: html`This cannot be undone. <strong>${messages === 0 ? 'The channel is empty.' : `All ${plural(messages, 'message', 'messages')} in it are deleted with it.`}</strong> Its webhooks are deleted too, so their URLs stop working.`,
    action: here,
    button: 'Delete channel',
    cancel: `/servers/${serverId}/settings/channels`,
  });
}

/** "Remove … from …?": they lose access at once; their messages stay. */
export function confirmMemberRemovePage(ctx: PageCtx, serverId: string, preview: { person: Person; serverName: string }): string {
  const { person, serverName } = preview;
  return confirmationPage(ctx, {
    question: `Remove ${person.name} from ${serverName}?`,
    consequence: html`<strong>${person.name}</strong> (@${person.username}) loses access to every channel at once, and their roles here. Their messages stay. They can come back only with a new invite.`,
    action: `/servers/${serverId}/members/${person.id}/remove`,
    button: 'Remove member',
    cancel: `/servers/${serverId}/settings/members`,
  });
}
