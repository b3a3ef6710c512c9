import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CliUsageError } from '../../src/cli/command.js';
import { ALL_PERMISSIONS, DEFAULT_EVERYONE_PERMISSIONS, Permission } from '../../src/core/permissions.js';
import { addMember } from '../../src/modules/directory/members.service.js';
import { createRole } from '../../src/modules/directory/roles.service.js';
import { createServer, memberPermissions, type CreatedServer } from '../../src/modules/directory/servers.service.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { csrfFrom, location, runCommand, signedIn } from '../support/directory-fixtures.js';
import type { PageAgent } from '../support/page-agent.js';
import { stored } from '../support/stored.js';
import { operatorActing, personActingOf } from '../support/acting.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

async function rolesOf(serverId: string): Promise<Array<{ id: string; name: string; permissions: string }>> {
  const rows = await t.services.db.selectFrom('roles').select(['id', 'name', 'permissions']).where('server_id', '=', serverId).orderBy('id').execute();
  return rows.map((r) => ({ id: String(r.id), name: r.name, permissions: r.permissions }));
}

/** A server, its owner's agent, and a member holding a role with `bits` (and that member's agent). */
async function serverWithMember(bits: bigint): Promise<{ server: CreatedServer; owner: PageAgent; member: PageAgent; memberId: string }> {
  const owner = await signedIn(t);
  const server = await createServer(t.services, personActingOf(owner.person.id), { name: 'Role play' });
  const member = await signedIn(t);
  const role = await createRole(t.services, operatorActing(), server.id, { name: 'Given', permissions: bits });
  await addMember(t.services, operatorActing(), server.id, member.person.id, [role.id]);
  return { server, owner: owner.agent, member: member.agent, memberId: member.person.id };
}

function rolesPage(serverId: string): string {
  return `/servers/${serverId}/settings/roles`;
}

describe('creating roles', () => {
  it('the owner creates a role with the permissions ticked on the form', async () => {
    const { server, owner } = await serverWithMember(0n);
    const page = await owner.get(rolesPage(server.id));
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('value="MANAGE_WEBHOOKS"');
    expect(page.body).toContain('Manage webhooks');
    const res = await owner.submit(rolesPage(server.id), `/servers/${server.id}/roles`, { name: 'Moderators', color: '#2e8b57', permissions: ['MANAGE_SERVER', 'MANAGE_MESSAGES'] });
    expect(res.statusCode).toBe(303);
    expect((await owner.get(location(res))).body).toContain('Moderators');
    const created = (await rolesOf(server.id)).find((r) => r.name === 'Moderators');
    expect(created?.permissions).toBe((Permission.MANAGE_SERVER | Permission.MANAGE_MESSAGES).toString());
  });

  it('needs Manage roles: a member without it gets 403 and a non-member 404, and nothing is created', async () => {
    const { server, member } = await serverWithMember(Permission.MANAGE_SERVER);
    expect((await member.get(rolesPage(server.id))).statusCode).toBe(403);
    const before = await rolesOf(server.id);
    const res = await member.postRaw(`/servers/${server.id}/roles`, { name: 'Mine', _csrf: await csrfFrom(member) });
    expect(res.statusCode).toBe(403);
    const stranger = await signedIn(t);
    const res2 = await stranger.agent.postRaw(`/servers/${server.id}/roles`, { name: 'Mine', _csrf: await csrfFrom(stranger.agent) });
    expect(res2.statusCode).toBe(404);
    expect(await rolesOf(server.id)).toEqual(before);
  });

  it("nobody can grant a permission they do not hold: 403, and the role is not created", async () => {
    const { server, member } = await serverWithMember(Permission.MANAGE_ROLES);
    const page = await member.get(rolesPage(server.id));
    expect(page.body).toMatch(/value="KICK_MEMBERS" disabled/);
    const before = await rolesOf(server.id);
    const res = await member.submit(rolesPage(server.id), `/servers/${server.id}/roles`, { name: 'Power', permissions: ['SEND_MESSAGES', 'BAN_MEMBERS'] });
    expect(res.statusCode).toBe(403);
    expect(res.body).toContain('You cannot grant permissions you do not have yourself: Ban members.');
    expect(await rolesOf(server.id)).toEqual(before);
    const ok = await member.submit(rolesPage(server.id), `/servers/${server.id}/roles`, { name: 'Talkers', permissions: ['SEND_MESSAGES'] });
    expect(ok.statusCode).toBe(303);
  });

  it("lists only the permissions that do something here, in Discord's groups, each with its line; saving keeps the bits it does not list (issue #24)", async () => {
    const { server, owner } = await serverWithMember(Permission.MANAGE_ROLES);
    const everyoneUrl = `/servers/${server.id}/settings/roles/${server.id}`;
    const page = await owner.get(everyoneUrl);
    for (const heading of ['General server permissions', 'Membership permissions', 'Text channel permissions', 'Advanced permissions']) expect(page.body).toContain(`<legend>${heading}</legend>`);
    expect(page.body).toContain('<input type="checkbox" id="perm-kick_members" name="permissions" value="KICK_MEMBERS" aria-describedby="perm-kick_members-hint">');
    expect(page.body).toContain('<span class="hint" id="perm-kick_members-hint">Remove members (never the owner) who hold nothing more than oneself.</span>');
    expect(page.body).not.toContain('Add reactions');
    expect(page.body).not.toMatch(/type="checkbox"[^>]*value="ADD_REACTIONS"/);
    // What the form sends as it stands: the ticked boxes and the kept bits.
    const ticked = [...page.body.matchAll(/<input type="checkbox" id="[^"]+" name="permissions" value="([A-Z_]+)" checked/g), ...page.body.matchAll(/<input type="hidden" name="permissions" value="([A-Z_]+)">/g)].map((m) => m[1] as string);
    expect(ticked).toContain('ADD_REACTIONS');
    const res = await owner.submit(everyoneUrl, `/servers/${server.id}/roles/${server.id}`, { permissions: ticked });
    expect(res.statusCode).toBe(303);
    expect((await rolesOf(server.id)).find((r) => r.id === server.id)?.permissions).toBe(String(DEFAULT_EVERYONE_PERMISSIONS));
  });

  it('only the owner or an Administrator can create a role holding Administrator', async () => {
    const { server, member, owner } = await serverWithMember(ALL_PERMISSIONS & ~Permission.ADMINISTRATOR);
    const before = await rolesOf(server.id);
    const res = await member.submit(rolesPage(server.id), `/servers/${server.id}/roles`, { name: 'Admins', permissions: ['ADMINISTRATOR'] });
    expect(res.statusCode).toBe(403);
    expect(res.body).toContain('Only the server owner or an Administrator can give out the Administrator permission.');
    expect(await rolesOf(server.id)).toEqual(before);
    expect((await owner.submit(rolesPage(server.id), `/servers/${server.id}/roles`, { name: 'Admins', permissions: ['ADMINISTRATOR'] })).statusCode).toBe(303);

    const admin = await serverWithMember(Permission.ADMINISTRATOR);
    expect((await admin.member.submit(rolesPage(admin.server.id), `/servers/${admin.server.id}/roles`, { name: 'Admins too', permissions: ['ADMINISTRATOR'] })).statusCode).toBe(303);
  });

  it('bad names, colours and permission names re-render with a message and create nothing', async () => {
    const { server, owner } = await serverWithMember(0n);
    const before = await rolesOf(server.id);
    const cases: Array<[Record<string, string | string[]>, string]> = [
      [{ name: '' }, 'A role name is 1–100 characters.'],
      [{ name: '   ' }, 'A role name is 1–100 characters.'],
      [{ name: 'r'.repeat(101) }, 'A role name is 1–100 characters.'],
      [{ name: '@everyone' }, 'That name is reserved'],
      [{ name: 'Painted', color: 'blue' }, 'A colour is written like #5865f2'],
      [{ name: 'Odd', permissions: ['MANAGE_UNIVERSE'] }, 'One of the chosen permissions does not exist.'],
    ];
    for (const [fields, message] of cases) {
      const res = await owner.submit(rolesPage(server.id), `/servers/${server.id}/roles`, fields);
      expect(res.statusCode, JSON.stringify(fields)).toBe(400);
      expect(res.body).toContain(message);
    }
    expect(await rolesOf(server.id)).toEqual(before);
  });

  it('the CLI creates a role from a decimal permission string and refuses a malformed one', async () => {
    const { server } = await serverWithMember(0n);
    const bits = Permission.USE_EXTERNAL_APPS | Permission.MANAGE_WEBHOOKS;
    const record = await runCommand(t, 'roles create', ['--server', server.id, '--name', 'Hooks', '--permissions', bits.toString()]);
    expect(record).toMatchObject({ guild_id: server.id, name: 'Hooks', permissions: bits.toString() });
    await expect(runCommand(t, 'roles create', ['--server', server.id, '--name', 'Bad', '--permissions', '1e3'])).rejects.toBeInstanceOf(CliUsageError);
    await expect(runCommand(t, 'roles create', ['--server', '1', '--name', 'Nowhere', '--permissions', '0'])).rejects.toThrow('Unknown Server');
  });
});

describe('editing and deleting roles', () => {
  it('the owner edits a role and @everyone; members feel the change at once', async () => {
    const { server, owner, memberId } = await serverWithMember(Permission.MANAGE_MESSAGES);
    const given = (await rolesOf(server.id)).find((r) => r.name === 'Given') as { id: string };
    const url = `/servers/${server.id}/settings/roles/${given.id}`;
    const res = await owner.submit(url, `/servers/${server.id}/roles/${given.id}`, { name: 'Helpers', color: '', permissions: ['MANAGE_WEBHOOKS'] });
    expect(res.statusCode).toBe(303);
    expect(await memberPermissions(t.services, server.id, memberId)).toBe(DEFAULT_EVERYONE_PERMISSIONS | Permission.MANAGE_WEBHOOKS);

    const everyoneUrl = `/servers/${server.id}/settings/roles/${server.id}`;
    const page = await owner.get(everyoneUrl);
    expect(page.body).not.toContain('Delete role');
    const res2 = await owner.submit(everyoneUrl, `/servers/${server.id}/roles/${server.id}`, { permissions: ['VIEW_CHANNEL'] });
    expect(res2.statusCode).toBe(303);
    expect(await memberPermissions(t.services, server.id, memberId)).toBe(Permission.VIEW_CHANNEL | Permission.MANAGE_WEBHOOKS);
    expect((await rolesOf(server.id)).find((r) => r.id === server.id)?.name).toBe('@everyone');
  });

  it('a role holding permissions the editor lacks cannot be edited or deleted by them', async () => {
    const { server, member } = await serverWithMember(Permission.MANAGE_ROLES);
    const admins = await createRole(t.services, operatorActing(), server.id, { name: 'Admins', permissions: Permission.ADMINISTRATOR });
    const url = `/servers/${server.id}/settings/roles/${admins.id}`;
    const page = await member.get(url);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('This role has permissions you do not have');
    const before = await rolesOf(server.id);
    const token = await csrfFrom(member, url);
    expect((await member.postRaw(`/servers/${server.id}/roles/${admins.id}`, { name: 'Admins', permissions: [], _csrf: token })).statusCode).toBe(403);
    expect((await member.postRaw(`/servers/${server.id}/roles/${admins.id}/delete`, { _csrf: token })).statusCode).toBe(403);
    expect(await rolesOf(server.id)).toEqual(before);
  });

  it('@everyone cannot be deleted; deleting another role takes its permissions from its members', async () => {
    const { server, owner, memberId } = await serverWithMember(Permission.MANAGE_SERVER);
    const token = await csrfFrom(owner, rolesPage(server.id));
    const refused = await owner.postRaw(`/servers/${server.id}/roles/${server.id}/delete`, { _csrf: token });
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toContain('The @everyone role cannot be deleted');
    expect((await rolesOf(server.id)).some((r) => r.id === server.id)).toBe(true);

    const given = (await rolesOf(server.id)).find((r) => r.name === 'Given') as { id: string };
    const res = await owner.postRaw(`/servers/${server.id}/roles/${given.id}/delete`, { _csrf: token });
    expect(res.statusCode).toBe(303);
    expect((await rolesOf(server.id)).map((r) => r.name)).toEqual(['@everyone']);
    expect(await memberPermissions(t.services, server.id, memberId)).toBe(DEFAULT_EVERYONE_PERMISSIONS);
  });

  it("an app's managed role is not editable or deletable here, even by the owner", async () => {
    const { server, owner } = await serverWithMember(0n);
    const id = t.services.ids.next();
    await stored.insertRole(t, { id, serverId: server.id, name: 'Helper Bot', permissions: Permission.SEND_MESSAGES, color: 0, position: 5, managedApplicationId: t.services.ids.next(), createdAt: t.clock.now() });
    const page = await owner.get(`/servers/${server.id}/settings/roles/${id}`);
    expect(page.body).toContain('This role belongs to an app');
    const token = await csrfFrom(owner, rolesPage(server.id));
    expect((await owner.postRaw(`/servers/${server.id}/roles/${id}`, { name: 'Mine now', permissions: ['ADMINISTRATOR'], _csrf: token })).statusCode).toBe(403);
    expect((await owner.postRaw(`/servers/${server.id}/roles/${id}/delete`, { _csrf: token })).statusCode).toBe(403);
    expect((await rolesOf(server.id)).find((r) => r.id === id)).toMatchObject({ name: 'Helper Bot', permissions: Permission.SEND_MESSAGES.toString() });
  });

  it('an unknown role answers 404', async () => {
    const { server, owner } = await serverWithMember(0n);
    expect((await owner.get(`/servers/${server.id}/settings/roles/42`)).statusCode).toBe(404);
    expect((await owner.get(`/servers/${server.id}/settings/roles/x`)).statusCode).toBe(404);
  });
});
