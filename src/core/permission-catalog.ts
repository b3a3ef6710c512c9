import { PERMISSION_LABELS, Permission, type PermissionName } from './permissions.js';

/**
 * The permissions that do something on this platform (issue #24), grouped as Discord's role
 * editor groups them, each with one line saying what it allows here. Only bits the code checks
 * are listed (docs/permissions.md "What each action needs"); the other Discord bits are still
 * parsed, stored and granted as before, but the pages do not offer them.
 */
export interface PermissionEntry {
  name: PermissionName;
  label: string;
  description: string;
}

export interface PermissionGroup {
  title: string;
  entries: readonly PermissionEntry[];
}

function entry(name: PermissionName, description: string): PermissionEntry {
  return { name, label: PERMISSION_LABELS[name], description };
}

export const PERMISSION_CATALOG: readonly PermissionGroup[] = [
  {
    title: 'General server permissions',
    entries: [
      entry('VIEW_CHANNEL', "See the server and its channels and read their messages."),
      entry('MANAGE_CHANNELS', 'Create, rename, reorder and delete channels.'),
      entry('MANAGE_ROLES', "Create, edit, give and take away roles that hold nothing beyond one's own permissions."),
      entry('MANAGE_WEBHOOKS', 'Create, edit and delete webhooks and see their URLs.'),
      entry('MANAGE_SERVER', 'Rename the server, invite people, manage invite links, remove members and add bots.'),
    ],
  },
  {
    title: 'Membership permissions',
    entries: [
      entry('CREATE_INSTANT_INVITE', 'Create invite links to the server.'),
      entry('KICK_MEMBERS', 'Remove members (never the owner) who hold nothing more than oneself.'),
    ],
  },
  {
    title: 'Text channel permissions',
    entries: [
      entry('SEND_MESSAGES', 'Post messages in channels.'),
      entry('EMBED_LINKS', 'Bots may post messages with embeds.'),
      entry('MANAGE_MESSAGES', "Delete anyone's messages, including webhooks' and bots'."),
    ],
  },
  {
    title: 'Advanced permissions',
    entries: [entry('ADMINISTRATOR', 'Every permission, everywhere in the server. Never granted to a bot.')],
  },
];

/** The bits the pages list: every bit in the catalog. */
export const LISTED_PERMISSIONS: bigint = PERMISSION_CATALOG.flatMap((g) => g.entries).reduce((all, e) => all | Permission[e.name], 0n);
