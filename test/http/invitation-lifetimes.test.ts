import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RateLimitedError } from '../../src/core/errors.js';
import { Permission } from '../../src/core/permissions.js';
import { INVITATION_ADDRESS_RULE, INVITATION_PERSON_RULE, SERVER_ADDRESS_RULE, SERVER_PERSON_RULE } from '../../src/modules/directory/creation-throttle.js';
import { INVITATION_LIFETIME_MS } from '../../src/modules/directory/invitations.js';
import { acceptInvite, createInvite } from '../../src/modules/directory/invites.service.js';
import { addMember, inviteMember, removeMember, setMemberRoles } from '../../src/modules/directory/members.service.js';
import { createRole, updateRole } from '../../src/modules/directory/roles.service.js';
import { createServer, memberPermissions } from '../../src/modules/directory/servers.service.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { csrfFrom, location, signedIn } from '../support/directory-fixtures.js';
import { createPerson } from '../support/oauth-factory.js';
import type { PageAgent } from '../support/page-agent.js';
import { actingOf, operatorActing, personActingOf } from '../support/acting.js';

/**
 * Issue #36 §3 "Invitations": a pending invitation no longer outlives the person who sent it.
 * Invitations expire (7 days), are listed with who sent them and can be cancelled by the sender
 * and by anyone with Manage server, and accepting one re-checks that its sender may still grant
 * what it grants; invite links likewise stop working once their creator may no longer invite.
 * Issue #36 §4: creating servers and sending invitations are limited per person and per address.
 */

let t: TestApp;
beforeAll(async () => {
  // The clock moves by days here: sessions must outlive it.
  t = await createTestApp({ env: { GATEHOUSE_SESSION_IDLE_DAYS: '30' } });
});
afterAll(async () => t.close());

const DAY = 86_400_000;
const membersPage = (serverId: string) => `/servers/${serverId}/settings/members`;
const invitesPage = (serverId: string) => `/servers/${serverId}/settings/invites`;

async function isMember(serverId: string, userId: string): Promise<boolean> {
  return (await memberPermissions(t.services, serverId, userId)) !== undefined;
}

async function memberRoles(serverId: string, userId: string): Promise<string[]> {
  const rows = await t.services.db.selectFrom('member_roles').select('role_id').where('server_id', '=', serverId).where('user_id', '=', userId).execute();
  return rows.map((r) => String(r.role_id));
}

/** The Accept actions on a person's home page. */
async function acceptActions(agent: PageAgent): Promise<string[]> {
  const home = await agent.get('/');
  expect(home.statusCode).toBe(200);
  return [...home.body.matchAll(/action="(\/invitations\/\d+\/accept)"/g)].map((m) => m[1] as string);
}

/** The Cancel actions of Settings → Invites as this agent sees them. */
async function cancelActions(agent: PageAgent, serverId: string): Promise<{ cancel: string[]; body: string }> {
  const page = await agent.get(invitesPage(serverId));
  return { cancel: [...page.body.matchAll(/action="(\/servers\/\d+\/invitations\/\d+\/cancel)"/g)].map((m) => m[1] as string), body: page.body };
}

/**
 * A server whose owner made Moe a moderator (Manage server, Manage roles, Kick members, through
 * the role "Mods"), and Moe's second account, not a member.
 */
async function moderatedServer(name: string) {
  const owner = await signedIn(t, { name: 'Olga Owner' });
  const server = await createServer(t.services, personActingOf(owner.person.id), { name });
  const mods = await createRole(t.services, operatorActing(), server.id, { name: 'Mods', permissions: Permission.MANAGE_SERVER | Permission.MANAGE_ROLES | Permission.KICK_MEMBERS });
  const moe = await signedIn(t, { name: 'Moe Moderator' });
  await addMember(t.services, operatorActing(), server.id, moe.person.id, [mods.id]);
  const alt = await signedIn(t, { name: 'Moe Again' });
  return { owner, server, mods, moe, alt };
}

describe('issue #36 §3: an invitation does not outlive what its sender may grant', () => {
  it('a moderator invites his second account with his own role and is removed: accepting later fails with a clear page and grants nothing', async () => {
    const { owner, server, mods, moe, alt } = await moderatedServer('Kicked mod');
    const sent = await moe.agent.submit(membersPage(server.id), `/servers/${server.id}/members`, { username: alt.person.username, roles: [mods.id] });
    expect(sent.statusCode).toBe(303);
    await removeMember(t.services, actingOf({ kind: 'person', id: owner.person.id }), server.id, moe.person.id);

    const [accept] = await acceptActions(alt.agent);
    const refused = await alt.agent.postRaw(accept as string, { _csrf: await csrfFrom(alt.agent) });
    expect(refused.statusCode).toBe(410);
    expect(refused.body).toContain('This invitation no longer works: the person who sent it can no longer invite people to Kicked mod.');
    expect(await isMember(server.id, alt.person.id)).toBe(false);
    // It is gone: nothing left to accept.
    expect(await acceptActions(alt.agent)).toEqual([]);
  });

  it('a sender who lost Manage server no longer invites: the invitation fails, as it would for a removed one', async () => {
    const { server, mods, moe, alt } = await moderatedServer('Demoted mod');
    await moe.agent.submit(membersPage(server.id), `/servers/${server.id}/members`, { username: alt.person.username });
    await updateRole(t.services, operatorActing(), server.id, mods.id, { permissions: Permission.KICK_MEMBERS });
    const [accept] = await acceptActions(alt.agent);
    expect((await alt.agent.postRaw(accept as string, { _csrf: await csrfFrom(alt.agent) })).statusCode).toBe(410);
    expect(await isMember(server.id, alt.person.id)).toBe(false);
  });

  it('a sender who may still invite but no longer give an offered role: the person joins with the roles the sender may still give', async () => {
    const { server, mods, moe, alt } = await moderatedServer('Fewer roles');
    const helpers = await createRole(t.services, operatorActing(), server.id, { name: 'Helpers', permissions: Permission.MANAGE_MESSAGES });
    await setMemberRoles(t.services, operatorActing(), server.id, moe.person.id, [mods.id]);
    await updateRole(t.services, operatorActing(), server.id, mods.id, { permissions: Permission.MANAGE_SERVER | Permission.MANAGE_ROLES | Permission.MANAGE_MESSAGES });
    await moe.agent.submit(membersPage(server.id), `/servers/${server.id}/members`, { username: alt.person.username, roles: [mods.id, helpers.id] });
    // Helpers now carries a permission Moe lacks: out of his reach.
    await updateRole(t.services, operatorActing(), server.id, helpers.id, { permissions: Permission.MANAGE_MESSAGES | Permission.BAN_MEMBERS });

    const [accept] = await acceptActions(alt.agent);
    const joined = await alt.agent.postRaw(accept as string, { _csrf: await csrfFrom(alt.agent) });
    expect(joined.statusCode).toBe(303);
    expect(await memberRoles(server.id, alt.person.id)).toEqual([mods.id]);
  });

  it('an invitation expires after 7 days: it leaves the home page, accepting it fails (410), and a new one can be sent', async () => {
    const owner = await signedIn(t, { name: 'Olga Owner' });
    const server = await createServer(t.services, personActingOf(owner.person.id), { name: 'Seven days' });
    const ivy = await signedIn(t, { name: 'Ivy' });
    await owner.agent.submit(membersPage(server.id), `/servers/${server.id}/members`, { username: ivy.person.username });
    const [accept] = await acceptActions(ivy.agent);
    expect(accept).toBeDefined();

    t.clock.advance(INVITATION_LIFETIME_MS - 1);
    expect(await acceptActions(ivy.agent)).toEqual([accept]);
    t.clock.advance(1);
    expect(await acceptActions(ivy.agent)).toEqual([]);
    const late = await ivy.agent.postRaw(accept as string, { _csrf: await csrfFrom(ivy.agent) });
    expect(late.statusCode).toBe(410);
    expect(late.body).toContain('This invitation has expired. Ask for a new one.');
    expect(await isMember(server.id, ivy.person.id)).toBe(false);

    await owner.agent.submit(membersPage(server.id), `/servers/${server.id}/members`, { username: ivy.person.username });
    const [again] = await acceptActions(ivy.agent);
    expect(again).toBeDefined();
    expect((await ivy.agent.postRaw(again as string, { _csrf: await csrfFrom(ivy.agent) })).statusCode).toBe(303);
    expect(await isMember(server.id, ivy.person.id)).toBe(true);
  });

  it('Settings → Invites lists pending invitations with who sent them (not to whom); the sender and anyone with Manage server cancel them, nobody else', async () => {
    const { owner, server, moe, alt } = await moderatedServer('Listed');
    await moe.agent.submit(membersPage(server.id), `/servers/${server.id}/members`, { username: alt.person.username });
    const bystander = await signedIn(t, { name: 'Bea' });
    await addMember(t.services, operatorActing(), server.id, bystander.person.id);

    const listed = await cancelActions(owner.agent, server.id);
    expect(listed.cancel).toHaveLength(1);
    expect(listed.body).toContain('Sent by <bdi>Moe Moderator</bdi>');
    expect(listed.body).not.toContain(alt.person.username);

    // A member without Manage server who did not send it: refused, nothing changes.
    const refused = await bystander.agent.postRaw(listed.cancel[0] as string, { _csrf: await csrfFrom(bystander.agent) });
    expect(refused.statusCode).toBe(403);
    expect(await acceptActions(alt.agent)).toHaveLength(1);

    // The sender cancels it.
    const cancelled = await moe.agent.submit(invitesPage(server.id), listed.cancel[0] as string, {});
    expect(cancelled.statusCode).toBe(303);
    expect((await moe.agent.get(location(cancelled))).body).toContain('Invitation cancelled.');
    expect(await acceptActions(alt.agent)).toEqual([]);

    // Someone with Manage server (the owner) cancels another.
    await moe.agent.submit(membersPage(server.id), `/servers/${server.id}/members`, { username: alt.person.username });
    const second = await cancelActions(owner.agent, server.id);
    expect((await owner.agent.submit(invitesPage(server.id), second.cancel[0] as string, {})).statusCode).toBe(303);
    expect(await acceptActions(alt.agent)).toEqual([]);
    expect((await owner.agent.postRaw(second.cancel[0] as string, { _csrf: await csrfFrom(owner.agent) })).statusCode).toBe(404);
  });

  it('an invite link stops working once its creator can no longer invite: the join page says why (410) and nobody joins', async () => {
    const owner = await signedIn(t, { name: 'Olga Owner' });
    const server = await createServer(t.services, personActingOf(owner.person.id), { name: 'Linked' });
    const max = await createPerson(t, { name: 'Max' });
    await addMember(t.services, operatorActing(), server.id, max.id);
    // @everyone holds Create invite by default.
    const { code } = await createInvite(t.services, personActingOf(max.id), server.id, {});
    await removeMember(t.services, actingOf({ kind: 'person', id: owner.person.id }), server.id, max.id);

    const visitor = await signedIn(t, { name: 'Vic' });
    const page = await visitor.agent.get(`/invite/${code}`);
    expect(page.statusCode).toBe(410);
    expect(page.body).toContain('This invite link no longer works: the person who created it can no longer invite people to this server.');
    await expect(acceptInvite(t.services, personActingOf(visitor.person.id), code)).rejects.toMatchObject({ status: 410, code: 10006 });
    expect(await isMember(server.id, visitor.person.id)).toBe(false);
    expect((await owner.agent.get(invitesPage(server.id))).body).toContain('Its creator can no longer invite people here: this link no longer works.');
  });
});

describe('issue #36 §4: creating servers and sending invitations are limited per person and per address', () => {
  it(`a person creates at most ${SERVER_PERSON_RULE.limit} servers a day from the web; the next is a 429 page with Retry-After, and a day later it works`, async () => {
    t.clock.advance(DAY);
    const { agent, person } = await signedIn(t);
    for (let i = 0; i < SERVER_PERSON_RULE.limit; i++) expect((await agent.submit('/', '/servers', { name: `Server ${i}` })).statusCode).toBe(303);
    const refused = await agent.submit('/', '/servers', { name: 'One too many' });
    expect(refused.statusCode).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(refused.body).toContain('You have created as many servers as allowed for now.');
    const owned = await t.services.db.selectFrom('servers').select('id').where('owner_id', '=', person.id).execute();
    expect(owned).toHaveLength(SERVER_PERSON_RULE.limit);
    // The operator's CLI is not limited.
    await createServer(t.services, operatorActing(), { ownerId: person.id, name: 'By the operator' });
    t.clock.advance(DAY);
    expect((await agent.submit('/', '/servers', { name: 'Next day' })).statusCode).toBe(303);
  });

  it(`one address creates at most ${SERVER_ADDRESS_RULE.limit} servers a day, whoever asks`, async () => {
    t.clock.advance(DAY);
    const address = '198.51.100.7';
    for (let i = 0; i < SERVER_ADDRESS_RULE.limit; i++) {
      const owner = await createPerson(t);
      await createServer(t.services, { ...personActingOf(owner.id), address }, { name: `Shared ${i}` });
    }
    const next = await createPerson(t);
    await expect(createServer(t.services, { ...personActingOf(next.id), address }, { name: 'Over' })).rejects.toBeInstanceOf(RateLimitedError);
    await createServer(t.services, { ...personActingOf(next.id), address: '198.51.100.8' }, { name: 'Elsewhere' });
  });

  it(`a person sends at most ${INVITATION_PERSON_RULE.limit} invitations an hour, invite links included, whether the usernames exist or not; the next is a 429 page`, async () => {
    t.clock.advance(DAY);
    const { agent, person } = await signedIn(t);
    const server = await createServer(t.services, personActingOf(person.id), { name: 'Inviting' });
    for (let i = 0; i < INVITATION_PERSON_RULE.limit - 1; i++) await inviteMember(t.services, { ...personActingOf(person.id), address: '203.0.113.9' }, server.id, `nobody_${i}`, []);
    await createInvite(t.services, { ...personActingOf(person.id), address: '203.0.113.9' }, server.id, {});
    const refused = await agent.submit(membersPage(server.id), `/servers/${server.id}/members`, { username: 'one_more' });
    expect(refused.statusCode).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(refused.body).toContain('You have sent as many invitations as allowed for now.');
    expect((await agent.submit(invitesPage(server.id), `/servers/${server.id}/invites`, {})).statusCode).toBe(429);
    t.clock.advance(60 * 60_000);
    expect((await agent.submit(membersPage(server.id), `/servers/${server.id}/members`, { username: 'one_more' })).statusCode).toBe(303);
  });

  it(`one address sends at most ${INVITATION_ADDRESS_RULE.limit} invitations an hour, whoever sends them`, async () => {
    t.clock.advance(DAY);
    const address = '2001:db8:1:2::5';
    let sent = 0;
    while (sent < INVITATION_ADDRESS_RULE.limit) {
      const owner = await createPerson(t);
      const server = await createServer(t.services, personActingOf(owner.id), { name: 'Spread' });
      for (let i = 0; i < INVITATION_PERSON_RULE.limit && sent < INVITATION_ADDRESS_RULE.limit; i++, sent++) await inviteMember(t.services, { ...personActingOf(owner.id), address }, server.id, `nobody_${i}`, []);
    }
    const owner = await createPerson(t);
    const server = await createServer(t.services, personActingOf(owner.id), { name: 'Spread' });
    // Another address of the same /64 counts as the same network.
    await expect(inviteMember(t.services, { ...personActingOf(owner.id), address: '2001:db8:1:2::99' }, server.id, 'nobody', [])).rejects.toBeInstanceOf(RateLimitedError);
    await inviteMember(t.services, { ...personActingOf(owner.id), address: '2001:db8:1:3::5' }, server.id, 'nobody', []);
  });
});
