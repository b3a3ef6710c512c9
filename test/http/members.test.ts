import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_PERMISSIONS, DEFAULT_EVERYONE_PERMISSIONS, Permission } from '../../src/core/permissions.js';
import { addMember } from '../../src/modules/directory/members.service.js';
import { createRole } from '../../src/modules/directory/roles.service.js';
import { createServer, memberPermissions, type CreatedServer } from '../../src/modules/directory/servers.service.js';
import type { Role } from '../../src/modules/directory/roles.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { csrfFrom, location, runCommand, signedIn } from '../support/directory-fixtures.js';
import { createPerson } from '../support/oauth-factory.js';
import type { PageAgent } from '../support/page-agent.js';
import { operatorActing, personActingOf } from '../support/acting.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

async function membersOf(serverId: string): Promise<Array<{ userId: string; roles: string[] }>> {
  const members = await t.services.db.selectFrom('members').select('user_id').where('server_id', '=', serverId).orderBy('user_id').execute();
  const roles = await t.services.db.selectFrom('member_roles').select(['user_id', 'role_id']).where('server_id', '=', serverId).orderBy('role_id').execute();
  return members.map((m) => ({
    userId: String(m.user_id),
    roles: roles.filter((r) => String(r.user_id) === String(m.user_id)).map((r) => String(r.role_id)),
  }));
}

interface Fixture {
  server: CreatedServer;
  owner: PageAgent;
  ownerId: string;
  helpers: Role;
  /** A member whose role holds `bits`. */
  actor: PageAgent;
  actorId: string;
}

async function fixture(bits: bigint): Promise<Fixture> {
  const owner = await signedIn(t);
  const server = await createServer(t.services, personActingOf(owner.person.id), { name: 'Membership' });
  const helpers = await createRole(t.services, operatorActing(), server.id, { name: 'Helpers', permissions: Permission.MANAGE_MESSAGES });
  const staff = await createRole(t.services, operatorActing(), server.id, { name: 'Staff', permissions: bits });
  const actor = await signedIn(t);
  await addMember(t.services, operatorActing(), server.id, actor.person.id, [staff.id]);
  return { server, owner: owner.agent, ownerId: owner.person.id, helpers, actor: actor.agent, actorId: actor.person.id };
}

const membersPage = (serverId: string) => `/servers/${serverId}/settings/members`;

/** The invited person accepts their one pending invitation from their home page (issue #21 §3). */
async function acceptOnHome(agent: PageAgent): Promise<void> {
  const home = await agent.get('/');
  const action = /action="(\/invitations\/\d+\/accept)"/.exec(home.body)?.[1];
  if (!action) throw new Error('no pending invitation on the home page');
  const res = await agent.submit('/', action, {});
  expect(res.statusCode).toBe(303);
}

describe('adding members by username', () => {
  it('the owner adds a person with roles; they hold those roles at once', async () => {
    const f = await fixture(0n);
    const dave = await signedIn(t, { username: 'dave_m', name: 'Dave' });
    const res = await f.owner.submit(membersPage(f.server.id), `/servers/${f.server.id}/members`, { username: '@Dave_M', roles: [f.helpers.id] });
    expect(res.statusCode).toBe(303);
    const notice = await f.owner.get(location(res));
    expect(notice.body).toContain('Invitation sent.');
    // Issue #21 §3: adding is an invitation; it becomes a membership once the person accepts it.
    expect(await memberPermissions(t.services, f.server.id, dave.person.id)).toBeUndefined();
    await acceptOnHome(dave.agent);
    const page = await f.owner.get(membersPage(f.server.id));
    expect(page.body).toContain('@dave_m');
    expect(await memberPermissions(t.services, f.server.id, dave.person.id)).toBe(DEFAULT_EVERYONE_PERMISSIONS | Permission.MANAGE_MESSAGES);
  });

  it('needs Manage server: with only Manage roles the form is absent and a post gets 403', async () => {
    const f = await fixture(Permission.MANAGE_ROLES);
    const page = await f.actor.get(membersPage(f.server.id));
    expect(page.statusCode).toBe(200);
    expect(page.body).not.toContain(`action="/servers/${f.server.id}/members"`);
    await createPerson(t, { username: 'erin_m' });
    const before = await membersOf(f.server.id);
    const res = await f.actor.postRaw(`/servers/${f.server.id}/members`, { username: 'erin_m', _csrf: await csrfFrom(f.actor) });
    expect(res.statusCode).toBe(403);
    expect(await membersOf(f.server.id)).toEqual(before);
  });

  it('giving roles while adding also needs Manage roles, and only roles within reach', async () => {
    const f = await fixture(Permission.MANAGE_SERVER);
    await createPerson(t, { username: 'frank_m' });
    const before = await membersOf(f.server.id);
    const res = await f.actor.submit(membersPage(f.server.id), `/servers/${f.server.id}/members`, { username: 'frank_m', roles: [f.helpers.id] });
    expect(res.statusCode).toBe(403);
    expect(res.body).toContain('Giving roles needs the Manage roles permission.');
    expect(await membersOf(f.server.id)).toEqual(before);
    const plain = await f.actor.submit(membersPage(f.server.id), `/servers/${f.server.id}/members`, { username: 'frank_m' });
    expect(plain.statusCode).toBe(303);
  });

  it('unknown usernames, existing members, bots and foreign roles are refused with a message, changing nothing', async () => {
    const f = await fixture(0n);
    const other = await createServer(t.services, personActingOf(f.ownerId), { name: 'Elsewhere' });
    const foreign = await createRole(t.services, operatorActing(), other.id, { name: 'Foreign', permissions: 0n });
    await createPerson(t, { username: 'gina_m' });
    const before = await membersOf(f.server.id);
    // Issue #21 §3: an unknown username is answered exactly like a known one (no username
    // oracle), and changes nothing; an empty one is refused with a message.
    const unknown = await f.owner.submit(membersPage(f.server.id), `/servers/${f.server.id}/members`, { username: 'no_such_person' });
    expect(unknown.statusCode).toBe(303);
    expect(location(unknown)).toBe(`${membersPage(f.server.id)}?done=invitation-sent`);
    const cases: Array<[Record<string, string | string[]>, string]> = [
      [{ username: '' }, 'Enter the username of the person to invite.'],
      [{ username: 'gina_m', roles: [foreign.id] }, 'One of the chosen roles does not exist in this server.'],
      [{ username: 'gina_m', roles: [f.server.id] }, 'One of the chosen roles does not exist in this server.'],
      [{ username: 'gina_m', roles: ['abc'] }, 'One of the chosen roles does not exist in this server.'],
    ];
    for (const [fields, message] of cases) {
      const res = await f.owner.submit(membersPage(f.server.id), `/servers/${f.server.id}/members`, fields);
      expect(res.statusCode, JSON.stringify(fields)).toBe(400);
      expect(res.body).toContain(message);
    }
    const owner = await t.services.db.selectFrom('users').select('username').where('id', '=', f.ownerId).executeTakeFirstOrThrow();
    const dup = await f.owner.submit(membersPage(f.server.id), `/servers/${f.server.id}/members`, { username: owner.username });
    expect(dup.statusCode).toBe(400);
    expect(dup.body).toContain('already a member');
    expect(await membersOf(f.server.id)).toEqual(before);
  });

  it('the CLI adds a member with roles and prints the membership', async () => {
    const f = await fixture(0n);
    const hana = await createPerson(t, { username: 'hana_m' });
    const record = await runCommand(t, 'members add', ['--server', f.server.id, '--username', 'hana_m', '--role', f.helpers.id]);
    expect(record).toMatchObject({ guild_id: f.server.id, user_id: hana.id, username: 'hana_m', roles: [f.helpers.id] });
    await expect(runCommand(t, 'members add', ['--server', f.server.id, '--username', 'hana_m'])).rejects.toThrow('Invalid Form Body');
  });
});

describe("changing a member's roles", () => {
  it('needs Manage roles; the new set replaces the old', async () => {
    const f = await fixture(Permission.MANAGE_ROLES | Permission.MANAGE_MESSAGES);
    const ivan = await createPerson(t);
    await addMember(t.services, operatorActing(), f.server.id, ivan.id, [f.helpers.id]);
    const res = await f.actor.submit(membersPage(f.server.id), `/servers/${f.server.id}/members/${ivan.id}/roles`, {});
    expect(res.statusCode).toBe(303);
    expect((await membersOf(f.server.id)).find((m) => m.userId === ivan.id)?.roles).toEqual([]);
    const back = await f.actor.submit(membersPage(f.server.id), `/servers/${f.server.id}/members/${ivan.id}/roles`, { roles: f.helpers.id });
    expect(back.statusCode).toBe(303);
    expect((await membersOf(f.server.id)).find((m) => m.userId === ivan.id)?.roles).toEqual([f.helpers.id]);
  });

  it('nobody gives or takes away a role holding permissions they lack', async () => {
    const f = await fixture(Permission.MANAGE_ROLES);
    const admins = await createRole(t.services, operatorActing(), f.server.id, { name: 'Admins', permissions: Permission.ADMINISTRATOR });
    const judy = await createPerson(t);
    await addMember(t.services, operatorActing(), f.server.id, judy.id, [admins.id]);
    const before = await membersOf(f.server.id);
    const strip = await f.actor.submit(membersPage(f.server.id), `/servers/${f.server.id}/members/${judy.id}/roles`, {});
    expect(strip.statusCode).toBe(403);
    expect(strip.body).toContain('has permissions you do not have');
    const self = await f.actor.submit(membersPage(f.server.id), `/servers/${f.server.id}/members/${f.actorId}/roles`, { roles: [admins.id] });
    expect(self.statusCode).toBe(403);
    expect(await membersOf(f.server.id)).toEqual(before);
    expect(await memberPermissions(t.services, f.server.id, f.actorId)).not.toBe(ALL_PERMISSIONS);
  });

  it('without Manage roles: no role controls and 403', async () => {
    const f = await fixture(Permission.MANAGE_SERVER);
    const page = await f.actor.get(membersPage(f.server.id));
    expect(page.body).not.toContain('Change roles');
    const res = await f.actor.postRaw(`/servers/${f.server.id}/members/${f.actorId}/roles`, { roles: f.helpers.id, _csrf: await csrfFrom(f.actor) });
    expect(res.statusCode).toBe(403);
  });
});

describe('removing members', () => {
  it('Manage server removes a member; the owner can never be removed', async () => {
    const f = await fixture(Permission.MANAGE_SERVER);
    const kim = await createPerson(t);
    await addMember(t.services, operatorActing(), f.server.id, kim.id);
    const res = await f.actor.submit(membersPage(f.server.id), `/servers/${f.server.id}/members/${kim.id}/remove`, {});
    expect(res.statusCode).toBe(303);
    expect(await memberPermissions(t.services, f.server.id, kim.id)).toBeUndefined();

    const page = await f.owner.get(membersPage(f.server.id));
    expect(page.body).not.toContain(`/members/${f.ownerId}/remove`);
    const refused = await f.owner.postRaw(`/servers/${f.server.id}/members/${f.ownerId}/remove`, { _csrf: await csrfFrom(f.owner) });
    expect(refused.statusCode).toBe(403);
    expect(refused.body).toContain('owner cannot be removed.');
    expect(await memberPermissions(t.services, f.server.id, f.ownerId)).toBe(ALL_PERMISSIONS);
  });

  it('a moderator cannot remove someone holding permissions they lack, and a plain member cannot remove anyone', async () => {
    const f = await fixture(Permission.KICK_MEMBERS);
    const admins = await createRole(t.services, operatorActing(), f.server.id, { name: 'Admins', permissions: Permission.ADMINISTRATOR });
    const lee = await createPerson(t);
    await addMember(t.services, operatorActing(), f.server.id, lee.id, [admins.id]);
    const res = await f.actor.postRaw(`/servers/${f.server.id}/members/${lee.id}/remove`, { _csrf: await csrfFrom(f.actor) });
    expect(res.statusCode).toBe(403);
    expect(await memberPermissions(t.services, f.server.id, lee.id)).toBe(ALL_PERMISSIONS);

    const plain = await signedIn(t);
    await addMember(t.services, operatorActing(), f.server.id, plain.person.id);
    const res2 = await plain.agent.postRaw(`/servers/${f.server.id}/members/${f.actorId}/remove`, { _csrf: await csrfFrom(plain.agent) });
    expect(res2.statusCode).toBe(403);
    expect(await memberPermissions(t.services, f.server.id, f.actorId)).toBeDefined();
  });

  it('removing someone who is not a member answers 404', async () => {
    const f = await fixture(0n);
    const stranger = await createPerson(t);
    const res = await f.owner.postRaw(`/servers/${f.server.id}/members/${stranger.id}/remove`, { _csrf: await csrfFrom(f.owner) });
    expect(res.statusCode).toBe(404);
  });
});
