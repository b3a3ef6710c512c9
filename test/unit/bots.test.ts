import { describe, expect, it } from 'vitest';
import { ALL_PERMISSIONS, Permission } from '../../src/core/permissions.js';
import { botUsername, checkCommands, commandAvailable, generateInstallAwareLink, memberMayUse, parseBotAuthorization } from '../../src/modules/applications/bots.js';
import { USERNAME_PATTERN } from '../../src/modules/directory/people.js';

const BASE_URL = 'https://chat.example';
const OFFERED = ['identify', 'email', 'servers', 'bot', 'applications.commands'];

describe('botUsername: the bot account is named after its app', () => {
  it('lower-cases the name and turns spaces and punctuation into underscores', () => {
    expect(botUsername('Build Watcher!')).toBe('build_watcher');
  });

  it('drops accents and keeps periods', () => {
    expect(botUsername('Café.Bot')).toBe('cafe.bot');
  });

  it('numbers later attempts so a taken name still gives a username', () => {
    expect(botUsername('Deploy Bot', 2)).toBe('deploy_bot_2');
    expect(botUsername('Deploy Bot', 17)).toBe('deploy_bot_17');
  });

  it('falls back to "bot" when the name has no usable letters', () => {
    expect(botUsername('日本')).toBe('bot');
    expect(botUsername('!!', 3)).toBe('bot_3');
  });

  it('always gives a valid username of at most 32 characters, suffix included', () => {
    for (const name of ['x'.repeat(32), `${'a'.repeat(31)}.`, 'A..B', '_lead and trail_', 'ab', 'Ünïcödé Näme With Many Words']) {
      for (const attempt of [1, 2, 50]) {
        const username = botUsername(name, attempt);
        expect(username, `${name} #${attempt}`).toMatch(USERNAME_PATTERN);
      }
    }
    expect(botUsername('x'.repeat(32), 50)).toBe(`${'x'.repeat(29)}_50`);
  });
});

describe('parseBotAuthorization: Authorization: Bot <token> (DESIGN §1)', () => {
  it('takes the token after the Bot scheme, in any case', () => {
    expect(parseBotAuthorization('Bot ghbt_abc-_9')).toBe('ghbt_abc-_9');
    expect(parseBotAuthorization('bot ghbt_abc')).toBe('ghbt_abc');
    expect(parseBotAuthorization('BOT   ghbt_abc ')).toBe('ghbt_abc');
  });

  it('refuses a missing header, another scheme, an empty token and extra words', () => {
    for (const header of [undefined, '', 'Bearer ghbt_abc', 'ghbt_abc', 'Bot', 'Bot ', 'Bot a b', 'Botghbt_abc', 'Bot ghbt_a=b']) {
      expect(parseBotAuthorization(header), String(header)).toBeUndefined();
    }
  });
});

function command(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { name: 'ping', description: 'Answers pong', ...overrides };
}

describe('checkCommands: the bulk-overwrite body (issue #4 "Commands")', () => {
  it('accepts names of 1 and 32 characters and refuses 33', () => {
    expect(checkCommands([command({ name: 'a' })]).ok).toBe(true);
    expect(checkCommands([command({ name: 'a'.repeat(32) })]).ok).toBe(true);
    expect(checkCommands([command({ name: 'a'.repeat(33) })])).toMatchObject({ ok: false, problems: [{ path: [0, 'name'], code: 'BASE_TYPE_BAD_LENGTH' }] });
    expect(checkCommands([command({ name: '' })])).toMatchObject({ ok: false, problems: [{ path: [0, 'name'] }] });
  });

  it('accepts lower-case letters of any script, digits, - and _, and refuses upper case, spaces and other signs', () => {
    for (const name of ['deploy-now', 'top_10', 'café', 'привет', '日本']) expect(checkCommands([command({ name })]).ok, name).toBe(true);
    for (const name of ['Ping', 'PING', 'Привет', 'two words', 'ping!', 'a.b', 'ping\u200b']) {
      expect(checkCommands([command({ name })]), name).toMatchObject({ ok: false, problems: [{ path: [0, 'name'], code: 'APPLICATION_COMMAND_INVALID_NAME' }] });
    }
  });

  it('accepts descriptions of 1 and 100 characters and refuses 0, 101 and blank ones', () => {
    expect(checkCommands([command({ description: 'x' })]).ok).toBe(true);
    expect(checkCommands([command({ description: 'é'.repeat(100) })]).ok).toBe(true);
    for (const description of ['', ' ', 'x'.repeat(101)]) {
      expect(checkCommands([command({ description })])).toMatchObject({ ok: false, problems: [{ path: [0, 'description'], code: 'BASE_TYPE_BAD_LENGTH' }] });
    }
    expect(checkCommands([command({ description: undefined })])).toMatchObject({ ok: false, problems: [{ path: [0, 'description'], code: 'BASE_TYPE_REQUIRED' }] });
  });

  it('accepts 100 commands and refuses 101', () => {
    const list = (n: number) => Array.from({ length: n }, (_, i) => command({ name: `c${i}` }));
    expect(checkCommands(list(100)).ok).toBe(true);
    expect(checkCommands(list(101))).toMatchObject({ ok: false, problems: [{ path: [], code: 'BASE_TYPE_MAX_LENGTH' }] });
  });

  it('refuses two commands with the same name, at the second one', () => {
    expect(checkCommands([command(), command({ description: 'again' })])).toMatchObject({ ok: false, problems: [{ path: [1, 'name'], code: 'APPLICATION_COMMANDS_DUPLICATE_NAME' }] });
  });

  it('defaults the type to 1 and refuses other types', () => {
    expect(checkCommands([command()])).toEqual({ ok: true, value: [{ name: 'ping', description: 'Answers pong', options: [], type: 1, defaultMemberPermissions: null, integrationTypes: null, contexts: null }] });
    expect(checkCommands([command({ type: 2 })])).toMatchObject({ ok: false, problems: [{ path: [0, 'type'] }] });
  });

  it('issue #40 §2: keeps Discord\'s default_member_permissions (decimal, as sent), integration_types and contexts (as bit sets); dm_permission false means server channels only', () => {
    expect(checkCommands([command({ default_member_permissions: '32', integration_types: [0], contexts: [0, 2] })])).toMatchObject({ ok: true, value: [{ defaultMemberPermissions: '32', integrationTypes: 0b1, contexts: 0b101 }] });
    expect(checkCommands([command({ default_member_permissions: 8, dm_permission: false })])).toMatchObject({ ok: true, value: [{ defaultMemberPermissions: '8', contexts: 0b1 }] });
    // contexts, the newer field, wins over dm_permission.
    expect(checkCommands([command({ dm_permission: false, contexts: [1] })])).toMatchObject({ ok: true, value: [{ contexts: 0b10 }] });
    expect(checkCommands([command({ default_member_permissions: null, integration_types: null, contexts: null })])).toMatchObject({ ok: true, value: [{ defaultMemberPermissions: null, integrationTypes: null, contexts: null }] });
    const bad = checkCommands([command({ default_member_permissions: 'admins', integration_types: [2], contexts: [], dm_permission: 'no' })]);
    expect(bad).toMatchObject({
      ok: false,
      problems: [
        { path: [0, 'default_member_permissions'], code: 'BASE_TYPE_BAD_TYPE' },
        { path: [0, 'integration_types', 0], code: 'BASE_TYPE_CHOICES' },
        { path: [0, 'contexts'], code: 'BASE_TYPE_BAD_TYPE' },
        { path: [0, 'dm_permission'], code: 'BASE_TYPE_BAD_TYPE' },
      ],
    });
    expect(checkCommands([command({ default_member_permissions: '18446744073709551616' })]).ok).toBe(false);
  });

  it('issue #40 §2: a command runs where its integration_types and contexts allow, for members holding its default_member_permissions', () => {
    const view = (integrationTypes: number[], contexts: number[] | null) => ({ integrationTypes, contexts });
    expect(commandAvailable(view([0, 1], null), 'server')).toBe(true);
    expect(commandAvailable(view([0, 1], null), 'bot-dm')).toBe(true);
    expect(commandAvailable(view([1], null), 'server')).toBe(false);
    expect(commandAvailable(view([0], [0, 1]), 'bot-dm')).toBe(false);
    expect(commandAvailable(view([0, 1], [1]), 'server')).toBe(false);
    expect(memberMayUse(null, 0n)).toBe(true);
    expect(memberMayUse(String(Permission.MANAGE_SERVER), Permission.MANAGE_SERVER | Permission.SEND_MESSAGES)).toBe(true);
    expect(memberMayUse(String(Permission.MANAGE_SERVER | Permission.KICK_MEMBERS), Permission.MANAGE_SERVER)).toBe(false);
    // "0": administrators only; so is a bit Gatehouse does not know, which no member can hold.
    expect(memberMayUse('0', Permission.MANAGE_SERVER)).toBe(false);
    expect(memberMayUse('0', Permission.ADMINISTRATOR)).toBe(true);
    expect(memberMayUse(String(1n << 60n), ALL_PERMISSIONS & ~Permission.ADMINISTRATOR)).toBe(false);
    expect(memberMayUse(String(1n << 60n), ALL_PERMISSIONS)).toBe(true);
  });

  it('keeps options as sent when each has a name, a description and a type; at most 25', () => {
    const option = { name: 'target', description: 'Who', type: 6, required: true };
    expect(checkCommands([command({ options: [option] })])).toMatchObject({ ok: true, value: [{ options: [option] }] });
    const many = Array.from({ length: 26 }, (_, i) => ({ ...option, name: `o${i}` }));
    expect(checkCommands([command({ options: many.slice(0, 25) })]).ok).toBe(true);
    expect(checkCommands([command({ options: many })])).toMatchObject({ ok: false, problems: [{ path: [0, 'options'], code: 'BASE_TYPE_MAX_LENGTH' }] });
    expect(checkCommands([command({ options: {} })])).toMatchObject({ ok: false, problems: [{ path: [0, 'options'], code: 'BASE_TYPE_BAD_TYPE' }] });
    const bad = checkCommands([command({ options: ['x', { name: 'Up', description: '', type: 99 }, option, option] })]);
    expect(bad.ok).toBe(false);
    if (!bad.ok) {
      expect(bad.problems.map((p) => p.path.join('.'))).toEqual(['0.options.0', '0.options.1.name', '0.options.1.description', '0.options.1.type', '0.options.3.name']);
    }
  });

  it('reports every problem at once and ignores unknown keys', () => {
    const checked = checkCommands([command({ name: 'Bad' }), 'text', command({ name: 'ok', description: '', default_member_permissions: '8' })]);
    expect(checked.ok).toBe(false);
    if (!checked.ok) expect(checked.problems.map((p) => p.path.join('.'))).toEqual(['0.name', '1', '2.description']);
    expect(checkCommands([command({ name_localizations: { fr: 'ping' }, dm_permission: false })]).ok).toBe(true);
  });

  it('refuses a body that is not an array (a lone command would wipe the others)', () => {
    for (const body of [command(), null, 'ping', 3]) expect(checkCommands(body)).toMatchObject({ ok: false, problems: [{ path: [], code: 'BASE_TYPE_ARRAY' }] });
  });

  it('an empty list is valid: it deletes every command', () => {
    expect(checkCommands([])).toEqual({ ok: true, value: [] });
  });
});

describe('generateInstallAwareLink: the URL generator with bots', () => {
  const app = { id: '1234', redirectUris: ['https://app.example/cb'], botRequireCodeGrant: false };
  const picked = Permission.SEND_MESSAGES | Permission.MANAGE_WEBHOOKS;

  it('bot alone without a redirect URI gives a plain install link with the permissions decimal', () => {
    const result = generateInstallAwareLink(BASE_URL, app, OFFERED, { scopes: ['bot'], redirectUri: '', state: undefined, permissions: picked });
    expect(result.link).toBe(`${BASE_URL}/app/oauth2/authorize?client_id=1234&permissions=536872960&scope=bot`);
    expect(result.problems).toEqual([]);
  });

  it('bot with applications.commands and no permissions says permissions=0', () => {
    const result = generateInstallAwareLink(BASE_URL, app, OFFERED, { scopes: ['applications.commands', 'bot'], redirectUri: undefined, state: undefined, permissions: 0n });
    expect(result.link).toBe(`${BASE_URL}/app/oauth2/authorize?client_id=1234&permissions=0&scope=bot%20applications.commands`);
  });

  it('a chosen redirect URI makes it a code-flow link, with permissions last', () => {
    const result = generateInstallAwareLink(BASE_URL, app, OFFERED, { scopes: ['bot', 'identify'], redirectUri: 'https://app.example/cb', state: 's', permissions: picked });
    expect(result.link).toBe(`${BASE_URL}/app/oauth2/authorize?client_id=1234&response_type=code&redirect_uri=https%3A%2F%2Fapp.example%2Fcb&scope=identify%20bot&state=s&permissions=536872960`);
  });

  it('without bot no permissions parameter is added, whatever was ticked', () => {
    const result = generateInstallAwareLink(BASE_URL, app, OFFERED, { scopes: ['identify'], redirectUri: 'https://app.example/cb', state: undefined, permissions: picked });
    expect(result.link).not.toContain('permissions');
  });

  it('"Require full OAuth2 authorization" turns a bot link into a code-flow link, and says why when no redirect URI can be used', () => {
    const strict = { ...app, botRequireCodeGrant: true };
    const one = generateInstallAwareLink(BASE_URL, strict, OFFERED, { scopes: ['bot'], redirectUri: '', state: undefined, permissions: 0n });
    expect(new URL(one.link as string).searchParams.get('response_type')).toBe('code');
    const none = generateInstallAwareLink(BASE_URL, { ...strict, redirectUris: [] }, OFFERED, { scopes: ['bot'], redirectUri: '', state: undefined, permissions: 0n });
    expect(none.link).toBeUndefined();
    expect(none.problems.join(' ')).toContain('requires full OAuth2 authorization');
  });

  it('identify still needs a redirect URI', () => {
    const result = generateInstallAwareLink(BASE_URL, { ...app, redirectUris: [] }, OFFERED, { scopes: ['identify', 'bot'], redirectUri: '', state: undefined, permissions: 0n });
    expect(result.link).toBeUndefined();
  });
});
