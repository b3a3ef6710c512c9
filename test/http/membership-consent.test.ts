import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Permission } from '../../src/core/permissions.js';
import { writeServerInstall } from '../../src/modules/applications/installs.service.js';
import { acceptInvite, createInvite } from '../../src/modules/directory/invites.service.js';
import { addMember } from '../../src/modules/directory/members.service.js';
import { createRole } from '../../src/modules/directory/roles.service.js';
import { createServer, memberPermissions } from '../../src/modules/directory/servers.service.js';
import { postMessage } from '../../src/modules/messages/messages.service.js';
import { createWebhook } from '../../src/modules/webhooks/webhooks.service.js';
import type { Channel } from '../../src/modules/directory/channels.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { csrfFrom, location, signedIn } from '../support/directory-fixtures.js';
import { createPerson } from '../support/oauth-factory.js';
import type { PageAgent } from '../support/page-agent.js';
import { createBot, openDm } from './dms.fixtures.js';
import { actingOf, operatorActing, personActingOf } from '../support/acting.js';
import { person } from '../../src/core/actor.js';

/**
 * Issue #21 §3 "Consent for membership, and a way out": adding a person is an invitation they
 * accept or decline, the add form is no username oracle, every member can leave, an owner can
 * delete their server after a confirmation stating what it removes, and only memberships the
 * person made by their own act count as consent to bot DMs.
 */

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

const membersPage = (serverId: string) => `/servers/${serverId}/settings/members`;

async function isMember(serverId: string, userId: string): Promise<boolean> {
  return (await memberPermissions(t.services, serverId, userId)) !== undefined;
}

async function invitationRows(): Promise<number> {
  const row = await t.services.db.selectFrom('member_invitations').select((eb) => eb.fn.countAll().as('n')).executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** The Accept and Decline actions of the pending invitations on a person's home page. */
async function invitationActions(agent: PageAgent): Promise<{ accept: string[]; decline: string[]; body: string }> {
  const home = await agent.get('/');
  expect(home.statusCode).toBe(200);
  return {
    accept: [...home.body.matchAll(/action="(\/invitations\/\d+\/accept)"/g)].map((m) => m[1] as string),
    decline: [...home.body.matchAll(/action="(\/invitations\/\d+\/decline)"/g)].map((m) => m[1] as string),
    body: home.body,
  };
}

async function ownerWithServer(name = 'Consent') {
  const owner = await signedIn(t, { name: 'Olga Owner' });
  const server = await createServer(t.services, personActingOf(owner.person.id), { name });
  return { owner, server, general: server.channels[0] as Channel };
}

describe('adding a person is an invitation they accept or decline', () => {
  it('the invitation is not a membership; the person sees it on their home page and joins only by accepting, with the offered roles', async () => {
    const { owner, server } = await ownerWithServer('Book club');
    const helpers = await createRole(t.services, operatorActing(), server.id, { name: 'Helpers', permissions: Permission.MANAGE_MESSAGES });
    const nora = await signedIn(t, { username: 'nora_c', name: 'Nora' });
    const sent = await owner.agent.submit(membersPage(server.id), `/servers/${server.id}/members`, { username: 'nora_c', roles: [helpers.id] });
    expect(sent.statusCode).toBe(303);
    expect(await isMember(server.id, nora.person.id)).toBe(false);
    expect((await owner.agent.get(location(sent))).body).toContain('1 invitation awaiting an answer.');

    const { accept, decline, body } = await invitationActions(nora.agent);
    expect(accept).toHaveLength(1);
    expect(decline).toHaveLength(1);
    expect(body).toContain('Olga Owner</bdi> invited you to join <strong><bdi>Book club</bdi></strong>');
    const joined = await nora.agent.submit('/', accept[0] as string, {});
    expect(joined.statusCode).toBe(303);
    expect(location(joined)).toBe(`/servers/${server.id}`);
    expect(await isMember(server.id, nora.person.id)).toBe(true);
    const member = await t.services.db.selectFrom('members').select('joined_via').where('server_id', '=', server.id).where('user_id', '=', nora.person.id).executeTakeFirstOrThrow();
    expect(member.joined_via).toBe('invitation');
    const roles = await t.services.db.selectFrom('member_roles').select('role_id').where('user_id', '=', nora.person.id).execute();
    expect(roles.map((r) => String(r.role_id))).toEqual([helpers.id]);
    // Used once: accepting again finds nothing.
    const again = await nora.agent.postRaw(accept[0] as string, { _csrf: await csrfFrom(nora.agent) });
    expect(again.statusCode).toBe(404);
    expect((await invitationActions(nora.agent)).accept).toEqual([]);
  });

  it('declining removes the invitation and joins nothing', async () => {
    const { owner, server } = await ownerWithServer();
    const omar = await signedIn(t, { username: 'omar_c' });
    await owner.agent.submit(membersPage(server.id), `/servers/${server.id}/members`, { username: 'omar_c' });
    const { decline } = await invitationActions(omar.agent);
    const res = await omar.agent.submit('/', decline[0] as string, {});
    expect(res.statusCode).toBe(303);
    expect((await omar.agent.get(location(res))).body).toContain('Invitation declined.');
    expect(await isMember(server.id, omar.person.id)).toBe(false);
    expect((await invitationActions(omar.agent)).accept).toEqual([]);
  });

  it("nobody answers another person's invitation, and answering needs the CSRF token", async () => {
    const { owner, server } = await ownerWithServer();
    const pia = await signedIn(t, { username: 'pia_c' });
    const mallory = await signedIn(t, { username: 'mallory_c' });
    await owner.agent.submit(membersPage(server.id), `/servers/${server.id}/members`, { username: 'pia_c' });
    const { accept } = await invitationActions(pia.agent);
    const stolen = await mallory.agent.postRaw(accept[0] as string, { _csrf: await csrfFrom(mallory.agent) });
    expect(stolen.statusCode).toBe(404);
    expect(await isMember(server.id, mallory.person.id)).toBe(false);
    const forged = await pia.agent.postRaw(accept[0] as string, {});
    expect(forged.statusCode).toBe(403);
    expect(await isMember(server.id, pia.person.id)).toBe(false);
    expect((await invitationActions(pia.agent)).accept).toEqual(accept);
  });

  it('the form is no username oracle: an unknown username, a bot and a real person get the same answer', async () => {
    const { owner, server } = await ownerWithServer();
    await createPerson(t, { username: 'quinn_c' });
    const bot = await createBot(t, { name: 'Oracle Bot' });
    const botUser = await t.services.db.selectFrom('users').select('username').where('id', '=', bot.botUserId).executeTakeFirstOrThrow();
    const answers = [];
    for (const username of ['quinn_c', 'nobody_by_that_name', botUser.username]) {
      const res = await owner.agent.submit(membersPage(server.id), `/servers/${server.id}/members`, { username });
      const page = await owner.agent.get(location(res));
      answers.push({ status: res.statusCode, location: location(res), notice: /<div class="notice" role="status">([^<]*)<\/div>/.exec(page.body)?.[1] });
    }
    expect(answers[1]).toEqual(answers[0]);
    expect(answers[2]).toEqual(answers[0]);
    expect(answers[0]?.status).toBe(303);
    expect(answers[0]?.notice).toContain('Invitation sent.');
  });

  it('the CLI `members add` stays a direct add (an operator is trusted), and joining by an invite link stays the person’s own act', async () => {
    const { server } = await ownerWithServer();
    const rita = await createPerson(t);
    await addMember(t.services, operatorActing(), server.id, rita.id);
    const sam = await createPerson(t);
    const { code } = await createInvite(t.services, personActingOf(server.ownerId), server.id, {});
    await acceptInvite(t.services, personActingOf(sam.id), code);
    const rows = await t.services.db.selectFrom('members').select(['user_id', 'joined_via']).where('server_id', '=', server.id).execute();
    const via = Object.fromEntries(rows.map((r) => [String(r.user_id), r.joined_via]));
    expect(via).toEqual({ [server.ownerId]: 'created', [rita.id]: 'operator', [sam.id]: 'invite_link' });
  });
});

describe('every member can leave a server', () => {
  it('a member leaves from the confirmation page and no longer belongs to it', async () => {
    const { server } = await ownerWithServer('Leavers');
    const tom = await signedIn(t);
    const { code } = await createInvite(t.services, personActingOf(server.ownerId), server.id, {});
    await acceptInvite(t.services, personActingOf(tom.person.id), code);
    const page = await tom.agent.get(`/servers/${server.id}/leave`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('Leave <bdi>Leavers</bdi>?');
    const res = await tom.agent.submit(`/servers/${server.id}/leave`, `/servers/${server.id}/leave`, {});
    expect(res.statusCode).toBe(303);
    expect((await tom.agent.get(location(res))).body).toContain('You left the server.');
    expect(await isMember(server.id, tom.person.id)).toBe(false);
    expect((await tom.agent.get(`/servers/${server.id}`)).statusCode).toBe(404);
  });

  it('the owner cannot leave (they delete the server instead); a stranger gets 404', async () => {
    const { owner, server } = await ownerWithServer();
    const redirect = await owner.agent.get(`/servers/${server.id}/leave`);
    expect(redirect.statusCode).toBe(303);
    expect(location(redirect)).toBe(`/servers/${server.id}/delete`);
    const refused = await owner.agent.postRaw(`/servers/${server.id}/leave`, { _csrf: await csrfFrom(owner.agent) });
    expect(refused.statusCode).toBe(403);
    expect(refused.body).toContain('delete the server instead');
    expect(await isMember(server.id, owner.person.id)).toBe(true);
    const stranger = await signedIn(t);
    expect((await stranger.agent.postRaw(`/servers/${server.id}/leave`, { _csrf: await csrfFrom(stranger.agent) })).statusCode).toBe(404);
  });
});

describe('an owner can delete their server', () => {
  it('the confirmation page states what it removes; deleting removes it all and its webhook URLs answer 404', async () => {
    const { owner, server, general } = await ownerWithServer('Doomed');
    await createRole(t.services, operatorActing(), server.id, { name: 'Mods', permissions: 0n });
    const member = await createPerson(t);
    await addMember(t.services, operatorActing(), server.id, member.id);
    await postMessage(t.services, actingOf(person(owner.person.id)), general.id, 'one');
    await postMessage(t.services, actingOf(person(owner.person.id)), general.id, 'two');
    const { webhook, token } = await createWebhook(t.services, actingOf({ kind: 'person', id: owner.person.id }), general, { name: 'CI', avatarUrl: null });
    const bot = await createBot(t, { name: 'Doom Bot' });
    await t.services.db.transaction().execute((trx) =>
      writeServerInstall(t.services, actingOf(person(owner.person.id)), trx, { application: { id: bot.client.app.id, name: 'Doom Bot', botUserId: bot.botUserId }, serverId: server.id, installerId: owner.person.id, granted: Permission.SEND_MESSAGES, commands: false }),
    );
    await t.services.db.insertInto('member_invitations').values({ id: t.services.ids.next(), server_id: server.id, user_id: (await createPerson(t)).id, inviter_id: owner.person.id, role_ids: '', created_at: t.clock.now(), expires_at: t.clock.now() + 86_400_000 }).execute();

    const page = await owner.agent.get(`/servers/${server.id}/delete`);
    expect(page.statusCode).toBe(200);
    const summary = /<ul class="deletion-summary">([\s\S]*?)<\/ul>/.exec(page.body)?.[1] ?? '';
    for (const item of ['1 channel', '2 messages', '1 webhook', '2 roles', '2 members besides you', '1 bot install', '0 invite links', '1 pending invitation']) expect(summary).toContain(`<li>${item}</li>`);

    const res = await owner.agent.submit(`/servers/${server.id}/delete`, `/servers/${server.id}/delete`, {});
    expect(res.statusCode).toBe(303);
    expect((await owner.agent.get(location(res))).body).toContain('Server deleted.');
    const left = async (table: 'servers' | 'channels' | 'roles' | 'members' | 'webhooks' | 'server_installs' | 'member_invitations', column: 'id' | 'server_id') =>
      (await t.services.db.selectFrom(table).select(column).where(column, '=', server.id).execute()).length;
    expect(await left('servers', 'id')).toBe(0);
    for (const table of ['channels', 'roles', 'members', 'webhooks', 'server_installs', 'member_invitations'] as const) expect(await left(table, 'server_id'), table).toBe(0);
    expect((await t.services.db.selectFrom('messages').select('id').where('channel_id', '=', general.id).execute()).length).toBe(0);
    expect((await t.app.inject({ method: 'GET', url: `/api/v1/webhooks/${webhook.id}/${token}` })).statusCode).toBe(404);
  });

  it('only the owner: a member with every permission gets 403 and the server stays', async () => {
    const { server } = await ownerWithServer();
    const admins = await createRole(t.services, operatorActing(), server.id, { name: 'Admins', permissions: Permission.ADMINISTRATOR });
    const admin = await signedIn(t);
    await addMember(t.services, operatorActing(), server.id, admin.person.id, [admins.id]);
    expect((await admin.agent.get(`/servers/${server.id}/delete`)).statusCode).toBe(403);
    const res = await admin.agent.postRaw(`/servers/${server.id}/delete`, { _csrf: await csrfFrom(admin.agent) });
    expect(res.statusCode).toBe(403);
    expect((await t.services.db.selectFrom('servers').select('id').where('id', '=', server.id).execute()).length).toBe(1);
  });
});

describe('a shared server joined without the person’s act is no consent to bot DMs', () => {
  it('added by an operator: the bot sharing the server cannot open a DM (50007)', async () => {
    const owner = await createPerson(t);
    const server = await createServer(t.services, personActingOf(owner.id), { name: 'Adder' });
    const bot = await createBot(t, { owner });
    await addMember(t.services, operatorActing(), server.id, bot.botUserId);
    const victim = await createPerson(t);
    await addMember(t.services, operatorActing(), server.id, victim.id);
    const res = await openDm(t, bot, { recipientId: victim.id });
    expect(res.statusCode).toBe(403);
    expect((res.json() as { code: number }).code).toBe(50007);
  });

  it('a membership older than invitations (origin unknown) is no consent either', async () => {
    const owner = await createPerson(t);
    const server = await createServer(t.services, personActingOf(owner.id), { name: 'Legacy' });
    const bot = await createBot(t, { owner });
    await addMember(t.services, operatorActing(), server.id, bot.botUserId);
    const old = await createPerson(t);
    await addMember(t.services, operatorActing(), server.id, old.id);
    await t.services.db.updateTable('members').set({ joined_via: 'added' }).where('server_id', '=', server.id).where('user_id', '=', old.id).execute();
    expect((await openDm(t, bot, { recipientId: old.id })).statusCode).toBe(403);
  });

  it('accepting an invitation, or joining by an invite link, is the person’s act: the bot may then DM them', async () => {
    const { owner, server } = await ownerWithServer('Consenting');
    const bot = await createBot(t);
    await addMember(t.services, operatorActing(), server.id, bot.botUserId);
    const invited = await signedIn(t, { username: 'uma_c' });
    await owner.agent.submit(membersPage(server.id), `/servers/${server.id}/members`, { username: 'uma_c' });
    expect((await openDm(t, bot, { recipientId: invited.person.id })).statusCode).toBe(403);
    const { accept } = await invitationActions(invited.agent);
    await invited.agent.submit('/', accept[0] as string, {});
    expect((await openDm(t, bot, { recipientId: invited.person.id })).statusCode).toBe(200);

    const linked = await createPerson(t);
    const { code } = await createInvite(t.services, personActingOf(server.ownerId), server.id, {});
    await acceptInvite(t.services, personActingOf(linked.id), code);
    expect((await openDm(t, bot, { recipientId: linked.id })).statusCode).toBe(200);
  });

  it('pending invitations are removed when the person joins by a link', async () => {
    const { owner, server } = await ownerWithServer();
    const vic = await signedIn(t, { username: 'vic_c' });
    const before = await invitationRows();
    await owner.agent.submit(membersPage(server.id), `/servers/${server.id}/members`, { username: 'vic_c' });
    expect(await invitationRows()).toBe(before + 1);
    const { code } = await createInvite(t.services, personActingOf(server.ownerId), server.id, {});
    await acceptInvite(t.services, personActingOf(vic.person.id), code);
    expect(await invitationRows()).toBe(before);
  });
});
