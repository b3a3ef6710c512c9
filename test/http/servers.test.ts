import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOUR } from '../../src/core/clock.js';
import { ALL_PERMISSIONS, DEFAULT_EVERYONE_PERMISSIONS, Permission } from '../../src/core/permissions.js';
import { hashSecret } from '../../src/core/secrets.js';
import { addMember, setMemberRoles } from '../../src/modules/directory/members.service.js';
import { createRole } from '../../src/modules/directory/roles.service.js';
import { listServerInvites } from '../../src/modules/directory/invites.service.js';
import { createServer, listServersForPerson, memberPermissions } from '../../src/modules/directory/servers.service.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { csrfFrom, location, runCommand, signedIn } from '../support/directory-fixtures.js';
import { createPerson } from '../support/oauth-factory.js';
import { PageAgent } from '../support/page-agent.js';
import { operatorActing, personActingOf } from '../support/acting.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

async function serverCount(): Promise<number> {
  const rows = await t.services.db.selectFrom('servers').select('id').execute();
  return rows.length;
}

describe('home page', () => {
  it('signed out, it says what this is and offers sign-in and sign-up', async () => {
    const res = await new PageAgent(t.app).get('/');
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('href="/login"');
    expect(res.body).toContain('href="/register"');
  });

  it('signed in, it lists your servers with their channels and a create form', async () => {
    const { agent, person } = await signedIn(t, { name: 'Home Owner' });
    const server = await createServer(t.services, personActingOf(person.id), { name: 'Bakers <3' });
    const res = await agent.get('/');
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('Bakers &lt;3');
    expect(res.body).toContain(`href="/channels/${server.channels[0]?.id}"`);
    expect(res.body).toContain('action="/servers"');
  });
});

describe('creating a server', () => {
  it('makes the creator its owner, with an @everyone role and a #general channel', async () => {
    const { agent, person } = await signedIn(t);
    const res = await agent.submit('/', '/servers', { name: '  Book Club  ' });
    expect(res.statusCode).toBe(303);
    const serverId = /^\/servers\/(\d+)$/.exec(location(res))?.[1] as string;
    expect(serverId).toMatch(/^\d+$/);

    const server = await t.services.db.selectFrom('servers').selectAll().where('id', '=', serverId).executeTakeFirstOrThrow();
    expect(server.name).toBe('Book Club');
    expect(String(server.owner_id)).toBe(person.id);
    const everyone = await t.services.db.selectFrom('roles').selectAll().where('server_id', '=', serverId).execute();
    expect(everyone).toHaveLength(1);
    expect(String(everyone[0]?.id)).toBe(serverId);
    expect(everyone[0]?.name).toBe('@everyone');
    expect(everyone[0]?.permissions).toBe(DEFAULT_EVERYONE_PERMISSIONS.toString());
    expect(await memberPermissions(t.services, serverId, person.id)).toBe(ALL_PERMISSIONS);

    const opened = await agent.get(location(res));
    expect(opened.statusCode).toBe(303);
    const channel = await agent.get(location(opened));
    expect(channel.statusCode).toBe(200);
    expect(channel.body).toContain('# general');
  });

  it('refuses a name shorter than 2 or longer than 100 characters, creating nothing', async () => {
    const { agent } = await signedIn(t);
    const before = await serverCount();
    for (const name of ['', ' x ', 'y'.repeat(101)]) {
      const res = await agent.submit('/', '/servers', { name });
      expect(res.statusCode).toBe(400);
      expect(res.body).toContain('A server name is 2–100 characters.');
    }
    expect(await serverCount()).toBe(before);
  });

  it('signed out, posting the form leads to sign-in and creates nothing', async () => {
    const agent = new PageAgent(t.app);
    const before = await serverCount();
    const res = await agent.postRaw('/servers', { name: 'Sneaky', _csrf: await csrfFrom(agent, '/login') });
    expect(res.statusCode).toBe(303);
    expect(location(res)).toMatch(/^\/login/);
    expect(await serverCount()).toBe(before);
  });

  it('the CLI prints the server with its owner, @everyone role and channels', async () => {
    const owner = await createPerson(t, { username: 'cliowner' });
    const record = await runCommand(t, 'servers create', ['--owner', 'CLIOwner', '--name', 'Ops']);
    expect(record).toMatchObject({ name: 'Ops', owner_id: owner.id, everyone_role_id: record['id'] });
    expect(record['channels']).toEqual([expect.objectContaining({ name: 'general', type: 0 })]);
    await expect(runCommand(t, 'servers create', ['--owner', 'nobody-here', '--name', 'Ops'])).rejects.toThrow(/nobody/);
    await expect(runCommand(t, 'servers create', ['--owner', 'cliowner', '--name', 'x'])).rejects.toThrow(/Invalid Form Body/);
  });
});

describe('who sees a server', () => {
  it('a non-member gets 404 for the server, its settings and its channels, as if it did not exist', async () => {
    const { person: owner } = await signedIn(t);
    const server = await createServer(t.services, personActingOf(owner.id), { name: 'Private' });
    const { agent } = await signedIn(t);
    for (const url of [`/servers/${server.id}`, `/servers/${server.id}/settings`, `/servers/${server.id}/settings/roles`, `/channels/${server.channels[0]?.id}`]) {
      const res = await agent.get(url);
      expect(res.statusCode, url).toBe(404);
      expect(res.body).not.toContain('Private');
    }
    expect((await agent.get('/servers/123')).statusCode).toBe(404);
    expect((await agent.get('/servers/not-a-number')).statusCode).toBe(404);
  });

  it('a member without Manage server, channels or roles gets 403 on settings and sees no settings link', async () => {
    const { person: owner } = await signedIn(t);
    const server = await createServer(t.services, personActingOf(owner.id), { name: 'Members only' });
    const { agent, person } = await signedIn(t);
    await addMember(t.services, operatorActing(), server.id, person.id);
    expect((await agent.get(`/servers/${server.id}/settings`)).statusCode).toBe(403);
    const channel = await agent.get(`/channels/${server.channels[0]?.id}`);
    expect(channel.statusCode).toBe(200);
    expect(channel.body).not.toContain(`/servers/${server.id}/settings"`);
  });
});

describe('renaming a server', () => {
  it('needs Manage server: the owner renames it, a plain member gets 403 and nothing changes', async () => {
    const { agent: ownerAgent, person: owner } = await signedIn(t);
    const server = await createServer(t.services, personActingOf(owner.id), { name: 'Old name' });
    const res = await ownerAgent.submit(`/servers/${server.id}/settings`, `/servers/${server.id}/settings`, { name: 'New name' });
    expect(res.statusCode).toBe(303);
    expect((await ownerAgent.get(location(res))).body).toContain('Server settings saved.');

    const { agent, person } = await signedIn(t);
    await addMember(t.services, operatorActing(), server.id, person.id);
    const refused = await agent.postRaw(`/servers/${server.id}/settings`, { name: 'Hijacked', _csrf: await csrfFrom(agent) });
    expect(refused.statusCode).toBe(403);
    const stored = await t.services.db.selectFrom('servers').select('name').where('id', '=', server.id).executeTakeFirstOrThrow();
    expect(stored.name).toBe('New name');
  });

  it('a bad name re-renders the form with the message and changes nothing', async () => {
    const { agent, person } = await signedIn(t);
    const server = await createServer(t.services, personActingOf(person.id), { name: 'Stays' });
    const res = await agent.submit(`/servers/${server.id}/settings`, `/servers/${server.id}/settings`, { name: 'z' });
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain('A server name is 2–100 characters.');
    const stored = await t.services.db.selectFrom('servers').select('name').where('id', '=', server.id).executeTakeFirstOrThrow();
    expect(stored.name).toBe('Stays');
  });
});

describe("a person's servers and permissions", () => {
  it('lists each server with the permissions computed for that person', async () => {
    const owner = await createPerson(t);
    const member = await createPerson(t);
    const a = await createServer(t.services, personActingOf(owner.id), { name: 'Alpha' });
    const b = await createServer(t.services, personActingOf(member.id), { name: 'Beta' });
    const mods = await createRole(t.services, operatorActing(), a.id, { name: 'Mods', permissions: Permission.MANAGE_SERVER });
    await addMember(t.services, operatorActing(), a.id, member.id, [mods.id]);
    const list = await listServersForPerson(t.services, member.id);
    expect(list.map((s) => s.name)).toEqual(['Alpha', 'Beta']);
    expect(list[0]?.permissions).toBe(DEFAULT_EVERYONE_PERMISSIONS | Permission.MANAGE_SERVER);
    expect(list[0]?.ownerId).toBe(owner.id);
    expect(list[1]?.permissions).toBe(ALL_PERMISSIONS);
    expect(b.ownerId).toBe(member.id);
  });

  it('a role taken away takes its permissions with it; a non-member has none', async () => {
    const owner = await createPerson(t);
    const member = await createPerson(t);
    const stranger = await createPerson(t);
    const server = await createServer(t.services, personActingOf(owner.id), { name: 'Gamma' });
    const admins = await createRole(t.services, operatorActing(), server.id, { name: 'Admins', permissions: Permission.ADMINISTRATOR });
    await addMember(t.services, operatorActing(), server.id, member.id, [admins.id]);
    expect(await memberPermissions(t.services, server.id, member.id)).toBe(ALL_PERMISSIONS);
    await setMemberRoles(t.services, operatorActing(), server.id, member.id, []);
    expect(await memberPermissions(t.services, server.id, member.id)).toBe(DEFAULT_EVERYONE_PERMISSIONS);
    expect(await memberPermissions(t.services, server.id, stranger.id)).toBeUndefined();
    expect(await memberPermissions(t.services, 'nonsense', member.id)).toBeUndefined();
  });
});

describe('invite links', () => {
  async function setup() {
    const owner = await signedIn(t);
    const server = await createServer(t.services, personActingOf(owner.person.id), { name: 'Invitational' });
    return { owner, server };
  }

  async function createLink(agent: PageAgent, serverId: string, fields: Record<string, string> = {}): Promise<string> {
    const res = await agent.submitAndFollow(`/servers/${serverId}/settings/invites`, `/servers/${serverId}/invites`, { expiresIn: '604800', maxUses: '', ...fields });
    expect(res.statusCode).toBe(200);
    const url = /http:\/\/localhost:8080\/invite\/(ghinv_[A-Za-z0-9_-]+)/.exec(res.body)?.[1];
    expect(url).toMatch(/^ghinv_[A-Za-z0-9_-]+$/);
    return url as string;
  }

  it('are found by hash and kept sealed under the server secret, so Manage server lists them again to copy', async () => {
    const { owner, server } = await setup();
    const code = await createLink(owner.agent, server.id);
    const rows = await t.services.db.selectFrom('invites').selectAll().where('server_id', '=', server.id).execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]?.code_hash).toBe(hashSecret(code));
    expect(rows[0]?.code_sealed).toEqual(expect.any(String));
    // Never in plain text in the database.
    expect(JSON.stringify(rows, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))).not.toContain(code);
    const again = await owner.agent.get(`/servers/${server.id}/settings/invites`);
    const id = String(rows[0]?.id);
    expect(again.body).toContain(`<input id="invite-${id}" type="text" readonly data-select value="http://localhost:8080/invite/${code}"`);
    expect(again.body).toContain(`data-copy="invite-${id}"`);
    expect(again.body).toContain(`action="/servers/${server.id}/invites/${id}/delete"`);
    expect(again.body).not.toMatch(/<\/div>\s*\}/);

    // A second server secret in front (rotation) still opens it; without the secret it was sealed under, it shows no link.
    const [current] = t.services.secrets;
    expect((await listServerInvites({ ...t.services, secrets: ['n'.repeat(40), current] }, server.id))[0]?.code).toBe(code);
    expect((await listServerInvites({ ...t.services, secrets: ['n'.repeat(40)] }, server.id))[0]?.code).toBeNull();
    // Sealed to its own row: moved onto another invite, it opens nothing.
    const other = await createServer(t.services, personActingOf(owner.person.id), { name: 'Elsewhere' });
    await createLink(owner.agent, other.id);
    await t.services.db.updateTable('invites').set({ code_sealed: rows[0]?.code_sealed ?? null }).where('server_id', '=', other.id).execute();
    expect((await listServerInvites(t.services, other.id))[0]?.code).toBeNull();
  });

  it('made before codes were kept are listed without a link, to revoke; expired ones show no link either', async () => {
    const { owner, server } = await setup();
    const code = await createLink(owner.agent, server.id, { expiresIn: '3600' });
    await t.services.db.updateTable('invites').set({ code_sealed: null }).where('server_id', '=', server.id).execute();
    const page = await owner.agent.get(`/servers/${server.id}/settings/invites`);
    expect(page.body).not.toContain(code);
    expect(page.body).toContain('Link not shown: it was created before invite codes were kept, or under a server secret no longer configured. It still works; revoke it and create a new one');
    expect(page.body).toContain('>Revoke</button>');

    const later = await createLink(owner.agent, server.id, { expiresIn: '3600' });
    t.clock.advance(2 * HOUR);
    const expired = await owner.agent.get(`/servers/${server.id}/settings/invites`);
    expect(expired.body).not.toContain(later);
    expect(expired.body).toContain('Expired: this link no longer works.');
  });

  it('are listed only to Manage server: a member with Create invite sees the new link once, and no list', async () => {
    const { owner, server } = await setup();
    const member = await signedIn(t);
    await addMember(t.services, operatorActing(), server.id, member.person.id);
    const inviter = await createRole(t.services, operatorActing(), server.id, { name: 'Inviter', permissions: Permission.CREATE_INSTANT_INVITE });
    await setMemberRoles(t.services, operatorActing(), server.id, member.person.id, [inviter.id]);
    await createLink(owner.agent, server.id);
    const mine = await createLink(member.agent, server.id);
    const again = await member.agent.get(`/servers/${server.id}/settings/invites`);
    expect(again.statusCode).toBe(200);
    expect(again.body).not.toContain('/invite/ghinv_');
    expect(again.body).not.toContain('Active links');
    expect((await owner.agent.get(`/servers/${server.id}/settings/invites`)).body).toContain(mine);
  });

  it('let a signed-in person join the server, once, and show sign-in to others', async () => {
    const { owner, server } = await setup();
    const code = await createLink(owner.agent, server.id);
    const anonymous = await new PageAgent(t.app).get(`/invite/${code}`);
    expect(anonymous.statusCode).toBe(200);
    expect(anonymous.body).toContain('Invitational');
    expect(anonymous.body).toContain(`/login?next=${encodeURIComponent(`/invite/${code}`)}`);

    const guest = await signedIn(t);
    const page = await guest.agent.get(`/invite/${code}`);
    expect(page.body).toContain('Join Invitational');
    const joined = await guest.agent.submit(`/invite/${code}`, `/invite/${code}`, {});
    expect(joined.statusCode).toBe(303);
    expect(location(joined)).toBe(`/servers/${server.id}`);
    expect(await memberPermissions(t.services, server.id, guest.person.id)).toBe(DEFAULT_EVERYONE_PERMISSIONS);
    const again = await guest.agent.submit(`/invite/${code}`, `/invite/${code}`, {});
    expect(again.statusCode).toBe(303);
    const row = await t.services.db.selectFrom('invites').select('uses').where('server_id', '=', server.id).executeTakeFirstOrThrow();
    expect(Number(row.uses)).toBe(1);
  });

  it('with a use limit admit that many people and then answer 410', async () => {
    const { owner, server } = await setup();
    const code = await createLink(owner.agent, server.id, { maxUses: '1' });
    const first = await signedIn(t);
    const second = await signedIn(t);
    const page = await second.agent.get(`/invite/${code}`);
    expect((await first.agent.submit(`/invite/${code}`, `/invite/${code}`, {})).statusCode).toBe(303);
    const token = /name="_csrf" value="([^"]+)"/.exec(page.body)?.[1] as string;
    const late = await second.agent.postRaw(`/invite/${code}`, { _csrf: token });
    expect(late.statusCode).toBe(410);
    expect(late.body).toContain('used as many times as allowed');
    expect(await memberPermissions(t.services, server.id, second.person.id)).toBeUndefined();
  });

  it('expire after their lifetime (410) and unknown codes answer 404', async () => {
    const { owner, server } = await setup();
    const code = await createLink(owner.agent, server.id, { expiresIn: '3600' });
    t.clock.advance(HOUR);
    const guest = await signedIn(t);
    const res = await guest.agent.get(`/invite/${code}`);
    expect(res.statusCode).toBe(410);
    expect(res.body).toContain('expired');
    expect((await guest.agent.get('/invite/ghinv_nothing')).statusCode).toBe(404);
    expect((await guest.agent.get('/invite/abc')).statusCode).toBe(404);
    t.clock.advance(-HOUR);
  });

  it('can be made by members holding Create invite, not by non-members; bad choices are refused', async () => {
    const { server } = await setup();
    const member = await signedIn(t);
    await addMember(t.services, operatorActing(), server.id, member.person.id);
    await createLink(member.agent, server.id);
    const bad = await member.agent.submit(`/servers/${server.id}/settings/invites`, `/servers/${server.id}/invites`, { expiresIn: '5', maxUses: '' });
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain('Choose one of the offered lifetimes.');
    const tooMany = await member.agent.submit(`/servers/${server.id}/settings/invites`, `/servers/${server.id}/invites`, { expiresIn: '3600', maxUses: '1000' });
    expect(tooMany.statusCode).toBe(400);
    const count = await t.services.db.selectFrom('invites').select('id').where('server_id', '=', server.id).execute();
    expect(count).toHaveLength(1);

    const stranger = await signedIn(t);
    const res = await stranger.agent.postRaw(`/servers/${server.id}/invites`, { expiresIn: '3600', _csrf: await csrfFrom(stranger.agent) });
    expect(res.statusCode).toBe(404);
  });

  it('can be revoked by Manage server, after which they stop working', async () => {
    const { owner, server } = await setup();
    const code = await createLink(owner.agent, server.id, { expiresIn: 'never' });
    const invite = await t.services.db.selectFrom('invites').select('id').where('server_id', '=', server.id).executeTakeFirstOrThrow();
    const res = await owner.agent.submit(`/servers/${server.id}/settings/invites`, `/servers/${server.id}/invites/${String(invite.id)}/delete`, {});
    expect(res.statusCode).toBe(303);
    expect((await owner.agent.get(`/invite/${code}`)).statusCode).toBe(404);
  });
});
