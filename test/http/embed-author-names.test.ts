import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Permission } from '../../src/core/permissions.js';
import { addMember } from '../../src/modules/directory/members.service.js';
import { createRole } from '../../src/modules/directory/roles.service.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { given, type TestWebhook } from '../support/given.js';
import { createPerson } from '../support/oauth-factory.js';
import { createBot, type TestBot } from './dms.fixtures.js';
import { operatorActing } from '../support/acting.js';

/**
 * An embed's author line follows the actor-name rule of webhook names and usernames (issue #36 §5,
 * core/names.ts): no control, invisible or text-direction characters, nothing that passes for the
 * service (GATEHOUSE_SERVICE_NAME, "Gatehouse" here) and no reserved word; 50035 at
 * embeds.N.author.name, and nothing is posted.
 */
let t: TestApp;
let hook: TestWebhook;
let bot: TestBot;

beforeAll(async () => {
  t = await createTestApp();
  hook = await given.webhook(t, { name: 'Deploys' });
  const owner = await createPerson(t);
  bot = await createBot(t, { name: 'Embed Bot', owner });
  const serverId = hook.channel.serverId as string;
  const role = await createRole(t.services, operatorActing(), serverId, { name: 'Bots', permissions: Permission.VIEW_CHANNEL | Permission.SEND_MESSAGES | Permission.EMBED_LINKS });
  await addMember(t.services, operatorActing(), serverId, bot.botUserId, [role.id]);
});
afterAll(async () => t.close());

const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  t.app.inject({ method: 'POST', url, headers: { ...headers, 'content-type': 'application/json' }, payload: JSON.stringify(body) });
const embedBy = (name: string) => ({ embeds: [{ author: { name }, description: 'Maintenance tonight' }] });

async function messageCount(): Promise<number> {
  const row = await t.services.db.selectFrom('messages').select((eb) => eb.fn.countAll<string>().as('n')).where('channel_id', '=', hook.channel.id).executeTakeFirstOrThrow();
  return Number(row.n);
}

describe('embed author names (issue #36 §5)', () => {
  it.each([
    ['the service name', 'Gatehouse', 'Names that pass for Gatehouse are not allowed.'],
    ['the service name disguised', 'G a t e h 0 u s e Team', 'Names that pass for Gatehouse are not allowed.'],
    ['a reserved word', 'System', '"System" is a reserved name.'],
    ['a mass mention', '@everyone', '"@everyone" is a reserved name.'],
    ['a text-direction override', '\u202EESUOHETAG', 'Must not contain control or invisible characters.'],
    ['a line break', 'Ops\nTeam', 'Must not contain control or invisible characters.'],
  ])('webhook execute refuses %s: 400 (50035) at embeds.0.author.name, nothing posted', async (_what, name, message) => {
    const before = await messageCount();
    const res = await post(`${hook.path}?wait=true`, embedBy(name));
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ code: 50035, message: 'Invalid Form Body', errors: { embeds: { '0': { author: { name: { _errors: [{ code: 'USERNAME_INVALID', message }] } } } } } });
    expect(await messageCount()).toBe(before);
  });

  it('an ordinary author name, emoji included, is posted as sent', async () => {
    const res = await post(`${hook.path}?wait=true`, embedBy('octocat 🐙'));
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ embeds: [{ author: { name: 'octocat 🐙' } }] });
  });

  it('a bot message and a webhook message edit are held to the same rule', async () => {
    const byBot = await post(`/api/v1/channels/${hook.channel.id}/messages`, embedBy('Gatehouse Security'), bot.headers);
    expect(byBot.statusCode).toBe(400);
    expect(byBot.json()).toMatchObject({ code: 50035, errors: { embeds: { '0': { author: { name: { _errors: [{ code: 'USERNAME_INVALID' }] } } } } } });

    const posted = (await post(`${hook.path}?wait=true`, { content: 'v1' })).json() as { id: string };
    const edit = await t.app.inject({ method: 'PATCH', url: `${hook.path}/messages/${posted.id}`, headers: { 'content-type': 'application/json' }, payload: JSON.stringify(embedBy('SYSTEM')) });
    expect(edit.statusCode).toBe(400);
    const stored = await t.services.db.selectFrom('messages').select('embeds').where('id', '=', posted.id).executeTakeFirstOrThrow();
    expect(stored.embeds ?? '[]').not.toContain('SYSTEM');
  });
});
