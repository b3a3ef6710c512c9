import { describe, expect, it } from 'vitest';
import {
  ALL_PERMISSIONS,
  DEFAULT_EVERYONE_PERMISSIONS,
  PERMISSION_LABELS,
  Permission,
  computePermissions,
  formatPermissions,
  has,
  parsePermissions,
  permissionNames,
  type PermissionName,
} from '../../src/core/permissions.js';
import { LISTED_PERMISSIONS, PERMISSION_CATALOG } from '../../src/core/permission-catalog.js';
import { channelSlug, normalizeChannelName } from '../../src/modules/directory/channels.js';
import { parseColor, permissionsFromNames, ungrantableBits } from '../../src/modules/directory/roles.js';
import { checkContent, toMessageView, type StoredMessage } from '../../src/modules/messages/messages.js';

describe('permission computation', () => {
  const moderators = Permission.MANAGE_SERVER | Permission.MANAGE_MESSAGES;

  it('the owner holds every permission, whatever their roles say', () => {
    expect(computePermissions({ isOwner: true, everyone: 0n, roles: [] })).toBe(ALL_PERMISSIONS);
  });

  it('Administrator from any role holds every permission', () => {
    const held = computePermissions({ isOwner: false, everyone: DEFAULT_EVERYONE_PERMISSIONS, roles: [Permission.ADMINISTRATOR] });
    expect(held).toBe(ALL_PERMISSIONS);
    expect(has(held, Permission.BAN_MEMBERS)).toBe(true);
  });

  it('Administrator on @everyone makes every member hold everything', () => {
    expect(computePermissions({ isOwner: false, everyone: Permission.ADMINISTRATOR, roles: [] })).toBe(ALL_PERMISSIONS);
  });

  it('a member holds the union of @everyone and every role', () => {
    const held = computePermissions({ isOwner: false, everyone: Permission.VIEW_CHANNEL, roles: [Permission.SEND_MESSAGES, moderators] });
    expect(held).toBe(Permission.VIEW_CHANNEL | Permission.SEND_MESSAGES | moderators);
    expect(has(held, Permission.ADMINISTRATOR)).toBe(false);
    expect(has(held, Permission.BAN_MEMBERS)).toBe(false);
  });

  it('a role removed takes its bits away (unless another source grants them)', () => {
    const withRole = computePermissions({ isOwner: false, everyone: Permission.VIEW_CHANNEL, roles: [moderators, Permission.MANAGE_MESSAGES] });
    const without = computePermissions({ isOwner: false, everyone: Permission.VIEW_CHANNEL, roles: [Permission.MANAGE_MESSAGES] });
    expect(has(withRole, Permission.MANAGE_SERVER)).toBe(true);
    expect(has(without, Permission.MANAGE_SERVER)).toBe(false);
    expect(has(without, Permission.MANAGE_MESSAGES)).toBe(true);
  });

  it("uses Discord's bit positions", () => {
    expect(Permission.ADMINISTRATOR).toBe(8n);
    expect(Permission.MANAGE_CHANNELS).toBe(16n);
    expect(Permission.MANAGE_SERVER).toBe(32n);
    expect(Permission.VIEW_CHANNEL).toBe(1024n);
    expect(Permission.SEND_MESSAGES).toBe(2048n);
    expect(Permission.MANAGE_MESSAGES).toBe(8192n);
    expect(Permission.EMBED_LINKS).toBe(16384n);
    expect(Permission.MENTION_EVERYONE).toBe(131072n);
    expect(Permission.MANAGE_ROLES).toBe(268435456n);
    expect(Permission.MANAGE_WEBHOOKS).toBe(536870912n);
  });
});

describe('permission strings', () => {
  it('parses decimal strings beyond 2^53 exactly', () => {
    // 2^53 + 1: as a JavaScript number this rounds to 2^53 and loses bit 0 (Create invite).
    expect(Number('9007199254740993')).toBe(2 ** 53);
    expect(parsePermissions('9007199254740993')).toBe(Permission.CREATE_INSTANT_INVITE);
    const high = (1n << 60n) | Permission.USE_EXTERNAL_APPS | Permission.ADMINISTRATOR;
    expect(parsePermissions(high.toString())).toBe(Permission.USE_EXTERNAL_APPS | Permission.ADMINISTRATOR);
    const text = (Permission.USE_EXTERNAL_APPS | Permission.SEND_POLLS | Permission.SEND_MESSAGES).toString();
    expect(formatPermissions(parsePermissions(text) as bigint)).toBe(text);
  });

  it('drops unknown bits below 2^64 and refuses anything else', () => {
    expect(parsePermissions('18446744073709551615')).toBe(ALL_PERMISSIONS);
    expect(parsePermissions('18446744073709551616')).toBeUndefined();
    expect(parsePermissions('-8')).toBeUndefined();
    expect(parsePermissions('0x8')).toBeUndefined();
    expect(parsePermissions('8.0')).toBeUndefined();
    expect(parsePermissions('')).toBeUndefined();
    expect(parsePermissions(' 8 ')).toBe(Permission.ADMINISTRATOR);
  });
});

describe('who may grant what', () => {
  it('nobody grants a bit they do not hold', () => {
    const mod = Permission.MANAGE_ROLES | Permission.MANAGE_MESSAGES;
    expect(ungrantableBits(mod, Permission.MANAGE_MESSAGES)).toBe(0n);
    expect(ungrantableBits(mod, Permission.MANAGE_MESSAGES | Permission.BAN_MEMBERS)).toBe(Permission.BAN_MEMBERS);
  });

  it('only holders of Administrator (owner included, via all bits) grant Administrator', () => {
    expect(ungrantableBits(ALL_PERMISSIONS & ~Permission.ADMINISTRATOR, Permission.ADMINISTRATOR)).toBe(Permission.ADMINISTRATOR);
    expect(ungrantableBits(ALL_PERMISSIONS, Permission.ADMINISTRATOR)).toBe(0n);
  });
});

describe('the permission catalog the pages list (issue #24)', () => {
  // Every bit the code checks (docs/permissions.md "What each action needs", SPEC §5.6).
  const ENFORCED: PermissionName[] = ['ADMINISTRATOR', 'VIEW_CHANNEL', 'MANAGE_CHANNELS', 'MANAGE_ROLES', 'MANAGE_WEBHOOKS', 'MANAGE_SERVER', 'CREATE_INSTANT_INVITE', 'KICK_MEMBERS', 'SEND_MESSAGES', 'EMBED_LINKS', 'MANAGE_MESSAGES'];

  it('lists every enforced permission exactly once and nothing else', () => {
    const listed = PERMISSION_CATALOG.flatMap((g) => g.entries.map((e) => e.name));
    expect([...listed].sort()).toEqual([...ENFORCED].sort());
    expect(new Set(listed).size).toBe(listed.length);
    expect(listed).not.toContain('ADD_REACTIONS');
    expect(LISTED_PERMISSIONS).toBe(ENFORCED.reduce((all, name) => all | Permission[name], 0n));
  });

  it("groups them under Discord's group titles, each entry with its label and a one-line description", () => {
    expect(PERMISSION_CATALOG.map((g) => g.title)).toEqual(['General server permissions', 'Membership permissions', 'Text channel permissions', 'Advanced permissions']);
    for (const group of PERMISSION_CATALOG) {
      expect(group.entries.length).toBeGreaterThan(0);
      for (const entry of group.entries) {
        expect(entry.label).toBe(PERMISSION_LABELS[entry.name]);
        expect(entry.description).toMatch(/^\S.*\.$/);
        expect(entry.description).not.toContain('\n');
      }
    }
  });
});

describe('role editor checkboxes', () => {
  it('turns checked names into bits and refuses unknown names', () => {
    expect(permissionsFromNames(['MANAGE_SERVER', 'SEND_MESSAGES'])).toBe(Permission.MANAGE_SERVER | Permission.SEND_MESSAGES);
    expect(permissionsFromNames([])).toBe(0n);
    expect(permissionsFromNames(['toString'])).toBeUndefined();
    expect(permissionsFromNames(['MANAGE_EVERYTHING'])).toBeUndefined();
    expect(permissionNames(permissionsFromNames(['ADMINISTRATOR']) as bigint)).toEqual(['ADMINISTRATOR']);
  });

  it('reads colours as #rrggbb or empty', () => {
    expect(parseColor('#5865f2')).toBe(0x5865f2);
    expect(parseColor('5865F2')).toBe(0x5865f2);
    expect(parseColor('')).toBe(0);
    expect(parseColor('red')).toBeUndefined();
    expect(parseColor('#12345')).toBeUndefined();
  });
});

describe('channel names', () => {
  it('are lower-cased with spaces turned into dashes', () => {
    expect(normalizeChannelName('  Release Notes ')).toBe('release-notes');
    expect(normalizeChannelName('dev_ops-2')).toBe('dev_ops-2');
    expect(normalizeChannelName('Café')).toBe('café');
  });

  it('drop punctuation and collapse dashes as Discord does: "Dev Ops!" is dev-ops', () => {
    expect(normalizeChannelName('Dev Ops!')).toBe('dev-ops');
    expect(normalizeChannelName('<script>')).toBe('script');
    expect(normalizeChannelName(' -- a  -  b -- ')).toBe('a-b');
    expect(normalizeChannelName('a ! b')).toBe('a-b');
    expect(normalizeChannelName('évé_nements 2')).toBe('évé_nements-2');
  });

  it('while typing keep a trailing dash so the next word can follow', () => {
    expect(channelSlug('Dev ', true)).toBe('dev-');
    expect(channelSlug('Dev ')).toBe('dev');
    expect(channelSlug('  ', true)).toBe('');
  });

  it('refuse names with nothing left and more than 100 characters', () => {
    expect(normalizeChannelName('')).toBeUndefined();
    expect(normalizeChannelName('   ')).toBeUndefined();
    expect(normalizeChannelName('!!!')).toBeUndefined();
    expect(normalizeChannelName('a'.repeat(100))).toBe('a'.repeat(100));
    expect(normalizeChannelName('a'.repeat(101))).toBeUndefined();
  });
});

describe('message content', () => {
  it('allows 2000 code points and refuses 2001, counting an emoji once', () => {
    expect(checkContent('😀'.repeat(2000))).toEqual({ ok: true, content: '😀'.repeat(2000) });
    expect(checkContent('😀'.repeat(2001))).toEqual({ ok: false, code: 'too-long' });
  });

  it('is trimmed, and empty or blank content is refused', () => {
    expect(checkContent('  hi \n')).toEqual({ ok: true, content: 'hi' });
    expect(checkContent(' \n\t')).toEqual({ ok: false, code: 'empty' });
  });

  it("shows an APP badge for webhook and bot messages, and the webhook's per-message name", () => {
    const base: StoredMessage = {
      id: '1',
      channelId: '2',
      authorId: '3',
      webhookId: null,
      authorName: null,
      authorAvatarUrl: null,
      content: 'x',
      embeds: '[]',
      createdAt: 0,
      editedAt: null,
      user: { name: 'Alice', avatarUrl: null, bot: false },
    };
    expect(toMessageView(base).author).toEqual({ id: '3', name: 'Alice', avatarUrl: null, bot: false, app: false });
    expect(toMessageView({ ...base, user: { name: 'Helper', avatarUrl: null, bot: true } }).author.app).toBe(true);
    const hook = toMessageView({ ...base, webhookId: '3', authorName: 'CI', authorAvatarUrl: 'https://example.com/ci.png', user: null, embeds: '[{"title":"t"}]' });
    expect(hook.author).toMatchObject({ name: 'CI', avatarUrl: 'https://example.com/ci.png', app: true });
    expect(hook.embeds).toEqual([{ title: 't' }]);
  });
});
