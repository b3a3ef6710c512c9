import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../../src/core/errors.js';
import { Permission } from '../../src/core/permissions.js';
import { hashSecret } from '../../src/core/secrets.js';
import { updateApplication } from '../../src/modules/applications/applications.service.js';
import { authenticateBot, DM_PERMISSIONS, enableBot, requireBotChannelPermission, resetBotToken, type BotPrincipal } from '../../src/modules/applications/bots.service.js';
import { addMember, setMemberRoles } from '../../src/modules/directory/members.service.js';
import { createRole } from '../../src/modules/directory/roles.service.js';
import { createServer } from '../../src/modules/directory/servers.service.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { runCommand, signedIn } from '../support/directory-fixtures.js';
import { createClient, createPerson, obtainTokens } from '../support/oauth-factory.js';
import { stored } from '../support/stored.js';
import { findApplicationByClientId } from '../../src/modules/applications/applications.service.js';
import { getPerson } from '../../src/modules/accounts/accounts.service.js';
import { OPERATOR } from '../../src/core/actor.js';
import { actingOf, operatorActing, personActingOf } from '../support/acting.js';

const BASE_URL = 'http://localhost:8080';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

function decodeEntities(text: string): string {
  return text.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

/** The value of a readonly field (the token box, the generated URL) on a page. */
function fieldValue(markup: string, id: string): string | undefined {
  const input = new RegExp(`<input id="${id}"[^>]* value="([^"]*)"`).exec(markup);
  const textarea = new RegExp(`<textarea id="${id}"[^>]*>([^<]*)</textarea>`).exec(markup);
  const raw = input?.[1] ?? textarea?.[1];
  return raw === undefined ? undefined : decodeEntities(raw);
}

/** A bot-only API call whose answer says whether the credentials work (200) or not (401). */
async function commandsWith(appId: string, authorization: string | undefined) {
  return t.app.inject({ method: 'GET', url: `/api/v1/applications/${appId}/commands`, headers: authorization === undefined ? {} : { authorization } });
}

async function botApp(name = 'Helper Bot') {
  const owner = await createPerson(t);
  const client = await createClient(t, { owner, name });
  const { botUserId, token } = await enableBot(t.services, actingOf(OPERATOR), client.app.id);
  return { owner, client, botUserId, token };
}

describe('the bot account and its token (issue #4 "Bots in the developer portal")', () => {
  it('enableBot creates a bot user with bot = 1 and the app id, named after the app with its icon, and stores only the token hash', async () => {
    const owner = await createPerson(t);
    const client = await createClient(t, { owner, name: 'Build Watcher' });
    await updateApplication(t.services, actingOf(OPERATOR), client.app.id, { iconUrl: 'https://cdn.example/icon.png' });
    const { botUserId, token } = await enableBot(t.services, actingOf(OPERATOR), client.app.id);
    expect(token).toMatch(/^ghbt_[A-Za-z0-9_-]{43}$/);
    const bot = await getPerson(t.services, botUserId);
    expect(bot).toMatchObject({ bot: true, applicationId: client.app.id, name: 'Build Watcher', username: 'build_watcher', avatarUrl: 'https://cdn.example/icon.png', email: null });
    const row = await t.services.db.selectFrom('applications').selectAll().where('id', '=', client.app.id).executeTakeFirstOrThrow();
    expect(String(row.bot_user_id)).toBe(botUserId);
    expect(row.bot_token_hash).toBe(hashSecret(token));
    expect(JSON.stringify(row, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))).not.toContain(token);
    const user = await t.services.db.selectFrom('users').selectAll().where('id', '=', botUserId).executeTakeFirstOrThrow();
    expect(user.password_hash).toBeNull();
  });

  it('a second bot for the same app is refused (50035) and the first token keeps working', async () => {
    const { client, token } = await botApp();
    await expect(enableBot(t.services, actingOf(OPERATOR), client.app.id)).rejects.toMatchObject({ code: 50035 });
    expect((await commandsWith(client.app.id, `Bot ${token}`)).statusCode).toBe(200);
  });

  it('two apps with the same name get distinct bot usernames', async () => {
    const a = await botApp('Twin Bot');
    const b = await botApp('Twin Bot');
    const [ua, ub] = [await getPerson(t.services, a.botUserId), await getPerson(t.services, b.botUserId)];
    expect(ua?.username).not.toBe(ub?.username);
    expect(ub?.username).toMatch(/^twin_bot/);
  });

  it('any number of apps sharing a name each get a bot: after name_2 … name_5 come random four-digit suffixes', async () => {
    const usernames = new Set<string>();
    for (let i = 0; i < 60; i += 1) {
      const app = await botApp('Test Bot');
      usernames.add((await getPerson(t.services, app.botUserId))?.username ?? '');
    }
    expect(usernames.size).toBe(60);
    for (const u of usernames) expect(u).toMatch(/^test_bot(_[2-5]|_\d{4})?$/);
  });

  it('the bot follows the app: renaming it or changing its icon changes the bot account', async () => {
    const { client, botUserId } = await botApp('Old Name');
    await updateApplication(t.services, actingOf(OPERATOR), client.app.id, { name: 'New Name', iconUrl: 'https://cdn.example/new.png' });
    expect(await getPerson(t.services, botUserId)).toMatchObject({ name: 'New Name', avatarUrl: 'https://cdn.example/new.png' });
  });

  it('resetting the token makes the old one fail at once (401) and the new one work', async () => {
    const { client, token } = await botApp();
    const fresh = await resetBotToken(t.services, actingOf(OPERATOR), client.app.id);
    expect(fresh).not.toBe(token);
    expect((await commandsWith(client.app.id, `Bot ${token}`)).statusCode).toBe(401);
    expect((await commandsWith(client.app.id, `Bot ${fresh}`)).statusCode).toBe(200);
  });

  it('an app without a bot has no token to reset', async () => {
    const client = await createClient(t, { owner: await createPerson(t) });
    await expect(resetBotToken(t.services, actingOf(OPERATOR), client.app.id)).rejects.toMatchObject({ code: 50035 });
    await expect(resetBotToken(t.services, actingOf(OPERATOR), '1')).rejects.toMatchObject({ code: 10002 });
  });
});

describe('bot credentials: Authorization: Bot <token> (DESIGN §1)', () => {
  it('the scheme is case-insensitive', async () => {
    const { client, token } = await botApp();
    for (const scheme of ['Bot', 'bot', 'BOT']) expect((await commandsWith(client.app.id, `${scheme} ${token}`)).statusCode, scheme).toBe(200);
  });

  it('missing, malformed, unknown or Bearer credentials are 401 {code: 0}', async () => {
    const { client, token, owner } = await botApp();
    const { access_token } = await obtainTokens(t, client, owner, ['identify']);
    for (const authorization of [undefined, '', 'Bot', `Bot ${token} extra`, token, 'Bot ghbt_unknown', `Bot ${token.slice(0, -1)}`, `Bearer ${access_token}`, `Bearer ${token}`]) {
      const res = await commandsWith(client.app.id, authorization);
      expect(res.statusCode, String(authorization)).toBe(401);
      expect(res.headers['content-type']).toContain('application/json');
      expect(res.json()).toEqual({ code: 0, message: '401: Unauthorized' });
    }
  });

  it('authenticateBot answers the application and its bot user', async () => {
    const { client, token, botUserId } = await botApp();
    const principal = await authenticateBot(t.services, `Bot ${token}`);
    expect(principal.botUserId).toBe(botUserId);
    expect(principal.application.id).toBe(client.app.id);
  });
});

describe('requireBotChannelPermission: a bot reaches exactly the servers it is in, with its roles', () => {
  let bot: BotPrincipal;
  let serverId: string;
  let channelId: string;
  beforeAll(async () => {
    const made = await botApp('Reach Bot');
    bot = await authenticateBot(t.services, `Bot ${made.token}`);
    const owner = await createPerson(t);
    const server = await createServer(t.services, personActingOf(owner.id), { name: 'Reach' });
    serverId = server.id;
    channelId = (server.channels[0] as { id: string }).id;
  });

  async function refusal(channel: string, bits: bigint): Promise<ApiError> {
    const error = await requireBotChannelPermission(t.services, bot, channel, bits).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ApiError);
    return error as ApiError;
  }

  it('a channel of a server the bot is not in is 404 10003, like an unknown or malformed one', async () => {
    for (const id of [channelId, '1', 'not-an-id']) expect(await refusal(id, 0n), id).toMatchObject({ status: 404, code: 10003 });
  });

  it('once a member, the bot holds @everyone; a missing bit is 403 50013; a role granting it lets it through', async () => {
    await addMember(t.services, operatorActing(), serverId, bot.botUserId);
    const ok = await requireBotChannelPermission(t.services, bot, channelId, Permission.SEND_MESSAGES);
    expect(ok.serverId).toBe(serverId);
    expect(ok.channel.id).toBe(channelId);
    expect(await refusal(channelId, Permission.MANAGE_WEBHOOKS)).toMatchObject({ status: 403, code: 50013 });
    const role = await createRole(t.services, operatorActing(), serverId, { name: 'Hooks', permissions: Permission.MANAGE_WEBHOOKS });
    await setMemberRoles(t.services, operatorActing(), serverId, bot.botUserId, [role.id]);
    const granted = await requireBotChannelPermission(t.services, bot, channelId, Permission.MANAGE_WEBHOOKS | Permission.SEND_MESSAGES);
    expect(granted.permissions & Permission.MANAGE_WEBHOOKS).toBe(Permission.MANAGE_WEBHOOKS);
    expect(await refusal(channelId, Permission.BAN_MEMBERS)).toMatchObject({ status: 403, code: 50013 });
  });

  it('a direct-message channel is reachable only by its two people, with view, send and embed', async () => {
    const person = await createPerson(t);
    const stranger = await createPerson(t);
    const dm = async (a: string, b: string) => {
      const id = t.services.ids.next();
      await stored.insertChannel(t, { id, serverId: null, type: 1, name: '', topic: null, position: 0, createdAt: t.clock.now() });
      const [low, high] = BigInt(a) < BigInt(b) ? [a, b] : [b, a];
      await t.services.db.insertInto('dm_channels').values({ channel_id: id, user_low: low, user_high: high }).execute();
      return id;
    };
    const own = await dm(bot.botUserId, person.id);
    const theirs = await dm(person.id, stranger.id);
    const ok = await requireBotChannelPermission(t.services, bot, own, Permission.SEND_MESSAGES);
    expect(ok).toMatchObject({ serverId: null, permissions: DM_PERMISSIONS });
    expect(await refusal(own, Permission.MANAGE_MESSAGES)).toMatchObject({ status: 403, code: 50013 });
    expect(await refusal(theirs, Permission.SEND_MESSAGES)).toMatchObject({ status: 404, code: 10003 });
  });
});

describe('the Bot section of the developer portal', () => {
  it('"Add bot" shows the token exactly once; the token works; the page then shows the bot without it', async () => {
    const { agent, person } = await signedIn(t);
    const client = await createClient(t, { owner: person, name: 'Portal Bot' });
    const page = `/developers/applications/${client.app.id}`;
    const before = await agent.get(page);
    expect(before.body).toContain('Add bot');
    const created = await agent.submitAndFollow(page, `${page}/bot`, {});
    expect(created.statusCode).toBe(200);
    expect(created.headers['cache-control']).toContain('no-store');
    const token = fieldValue(created.body, 'bot-token') as string;
    expect(token).toMatch(/^ghbt_/);
    expect((await commandsWith(client.app.id, `Bot ${token}`)).statusCode).toBe(200);
    const app = await findApplicationByClientId(t.services, client.app.id);
    const bot = await getPerson(t.services, app?.botUserId as string);
    const after = await agent.get(page);
    expect(after.body).not.toContain(token);
    expect(after.body).not.toContain('Add bot');
    expect(after.body).toContain('<span class="badge">APP</span><strong>Portal Bot</strong>');
    expect(after.body).toContain(`@${bot?.username}`);
    // Posting "Add bot" again does not make a second bot or a new token.
    const again = await agent.submit(page, `${page}/bot`, {});
    expect(again.statusCode).toBe(303);
    expect((await findApplicationByClientId(t.services, client.app.id))?.botUserId).toBe(bot?.id);
    expect((await commandsWith(client.app.id, `Bot ${token}`)).statusCode).toBe(200);
  });

  it('"Reset token" asks first; confirming shows a new token once and the old one stops working at once', async () => {
    const { agent, person } = await signedIn(t);
    const client = await createClient(t, { owner: person });
    const page = `/developers/applications/${client.app.id}`;
    const token = fieldValue((await agent.submitAndFollow(page, `${page}/bot`, {})).body, 'bot-token') as string;
    const confirm = await agent.get(`${page}/bot/reset-token`);
    expect(confirm.statusCode).toBe(200);
    expect(confirm.body).toContain('stops working immediately');
    expect((await commandsWith(client.app.id, `Bot ${token}`)).statusCode).toBe(200); // the GET changed nothing
    const reset = await agent.submitAndFollow(`${page}/bot/reset-token`, `${page}/bot/reset-token`, {});
    expect(reset.statusCode).toBe(200);
    const fresh = fieldValue(reset.body, 'bot-token') as string;
    expect(fresh).toMatch(/^ghbt_/);
    expect(fresh).not.toBe(token);
    expect((await commandsWith(client.app.id, `Bot ${token}`)).statusCode).toBe(401);
    expect((await commandsWith(client.app.id, `Bot ${fresh}`)).statusCode).toBe(200);
  });

  it('"Public bot" (on by default) and "Require full OAuth2 authorization" are toggles saved together', async () => {
    const { agent, person } = await signedIn(t);
    const client = await createClient(t, { owner: person });
    const page = `/developers/applications/${client.app.id}`;
    await agent.submit(page, `${page}/bot`, {});
    const shown = await agent.get(page);
    expect(shown.body).toContain('name="botPublic" value="on" checked');
    expect(shown.body).toContain('name="botRequireCodeGrant" value="on" aria-describedby');
    const off = await agent.submit(page, `${page}/bot/settings`, { botRequireCodeGrant: 'on' });
    expect(off.statusCode).toBe(303);
    expect(await findApplicationByClientId(t.services, client.app.id)).toMatchObject({ botPublic: false, botRequireCodeGrant: true });
    expect((await agent.get(page)).body).toContain('name="botRequireCodeGrant" value="on" checked');
    await agent.submit(page, `${page}/bot/settings`, { botPublic: 'on' });
    expect(await findApplicationByClientId(t.services, client.app.id)).toMatchObject({ botPublic: true, botRequireCodeGrant: false });
  });

  it("lists the bot's commands, read-only", async () => {
    const { agent, person } = await signedIn(t);
    const client = await createClient(t, { owner: person });
    const page = `/developers/applications/${client.app.id}`;
    const token = fieldValue((await agent.submitAndFollow(page, `${page}/bot`, {})).body, 'bot-token') as string;
    expect((await agent.get(page)).body).toContain('No commands yet');
    await t.app.inject({
      method: 'PUT',
      url: `/api/v1/applications/${client.app.id}/commands`,
      headers: { authorization: `Bot ${token}`, 'content-type': 'application/json' },
      payload: JSON.stringify([{ name: 'deploy', description: 'Ship <it>' }]),
    });
    const body = (await agent.get(page)).body;
    expect(body).toContain('<code>/deploy</code> <span class="muted">Ship &lt;it&gt;</span>');
  });

  it("someone else's application: the bot pages and forms are 404 and nothing is created", async () => {
    const { person: owner } = await signedIn(t);
    const { agent } = await signedIn(t);
    const client = await createClient(t, { owner });
    const page = `/developers/applications/${client.app.id}`;
    const own = await createClient(t, { owner: (await signedIn(t)).person });
    const token = /name="_csrf" value="([^"]+)"/.exec((await agent.get('/developers/applications')).body)?.[1] as string;
    for (const action of ['/bot', '/bot/reset-token', '/bot/settings']) {
      expect((await agent.postRaw(`${page}${action}`, { _csrf: token })).statusCode, action).toBe(404);
    }
    expect((await agent.get(`${page}/bot/reset-token`)).statusCode).toBe(404);
    expect((await findApplicationByClientId(t.services, client.app.id))?.botUserId).toBeNull();
    expect(own.app.botUserId).toBeNull();
  });
});

describe('the OAuth2 URL generator with bots', () => {
  it('offers bot and applications.commands and a permission picker by name; the link carries the decimal string', async () => {
    const { agent, person } = await signedIn(t);
    const client = await createClient(t, { owner: person, redirectUris: ['https://app.example/cb'] });
    const base = `/developers/applications/${client.app.id}/oauth2/url-generator`;
    const empty = await agent.get(base);
    expect(empty.body).toContain('name="scope" value="bot"');
    expect(empty.body).toContain('name="scope" value="applications.commands"');
    expect(empty.body).toContain('<input type="checkbox" id="perm-manage_webhooks" name="permission" value="MANAGE_WEBHOOKS" aria-describedby="perm-manage_webhooks-hint"> <span>Manage webhooks<br><span class="hint" id="perm-manage_webhooks-hint">Create, edit and delete webhooks and see their URLs.</span>');
    // Only what does something here, in Discord's groups (issue #24).
    for (const heading of ['General server permissions', 'Membership permissions', 'Text channel permissions', 'Advanced permissions']) expect(empty.body).toContain(`<legend>${heading}</legend>`);
    expect(empty.body).not.toContain('Add reactions');
    expect(empty.body).toMatch(/<form method="get"/);

    const query = new URLSearchParams([
      ['scope', 'bot'],
      ['scope', 'applications.commands'],
      ['redirect_uri', ''],
      ['permission', 'SEND_MESSAGES'],
      ['permission', 'MANAGE_WEBHOOKS'],
      ['permission', 'NOT_A_PERMISSION'],
    ]);
    const res = await agent.get(`${base}?${query.toString()}`);
    expect(res.statusCode).toBe(200);
    const expected = (Permission.SEND_MESSAGES | Permission.MANAGE_WEBHOOKS).toString();
    expect(expected).toBe('536872960');
    expect(fieldValue(res.body, 'permissions-value')).toBe(expected);
    expect(res.body).toContain('name="permission" value="MANAGE_WEBHOOKS" checked');
    expect(fieldValue(res.body, 'generated-url')).toBe(`${BASE_URL}/app/oauth2/authorize?client_id=${client.app.id}&permissions=${expected}&scope=bot%20applications.commands`);

    // A bit the picker does not list, from a link made elsewhere, stays in the value.
    const kept = await agent.get(`${base}?scope=bot&redirect_uri=&permission=ADD_REACTIONS&permission=SEND_MESSAGES`);
    expect(kept.body).toContain('<input type="hidden" name="permission" value="ADD_REACTIONS">');
    expect(fieldValue(kept.body, 'permissions-value')).toBe((Permission.ADD_REACTIONS | Permission.SEND_MESSAGES).toString());

    const withCode = await agent.get(`${base}?scope=bot&scope=identify&redirect_uri=${encodeURIComponent('https://app.example/cb')}&permission=SEND_MESSAGES`);
    const url = new URL(fieldValue(withCode.body, 'generated-url') as string);
    expect(url.searchParams.get('response_type')).toBe('code');
    expect(url.searchParams.get('scope')).toBe('identify bot');
    expect(url.searchParams.get('permissions')).toBe(Permission.SEND_MESSAGES.toString());
  });
});

describe('gatehouse apps create --bot', () => {
  it('adds the bot and prints bot_user_id and, once, a working bot_token', async () => {
    const owner = await createPerson(t);
    const out = await runCommand(t, 'apps create', ['--owner', owner.username, '--name', 'Cli Bot', '--redirect-uri', 'https://cli.example/cb', '--bot', '--private-bot']);
    expect(out).toMatchObject({ bot_user_id: expect.stringMatching(/^\d+$/), bot_token: expect.stringMatching(/^ghbt_/), bot_public: false });
    const bot = await getPerson(t.services, out['bot_user_id'] as string);
    expect(bot).toMatchObject({ bot: true, applicationId: out['id'], name: 'Cli Bot' });
    expect((await commandsWith(out['id'] as string, `Bot ${out['bot_token'] as string}`)).statusCode).toBe(200);
  });

  it('without --bot there is no bot and no token', async () => {
    const owner = await createPerson(t);
    const out = await runCommand(t, 'apps create', ['--owner', owner.username, '--name', 'No Bot']);
    expect(out).not.toHaveProperty('botToken');
    expect((await findApplicationByClientId(t.services, out['id'] as string))?.botUserId).toBeNull();
  });
});
