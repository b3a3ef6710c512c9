import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Permission } from '../../src/core/permissions.js';
import { AuditLogEvent } from '../../src/modules/audit/audit.js';
import type { Person } from '../../src/modules/directory/people.js';
import { addMember } from '../../src/modules/directory/members.service.js';
import { createRole } from '../../src/modules/directory/roles.service.js';
import { createServer, type CreatedServer } from '../../src/modules/directory/servers.service.js';
import { operatorActing, personActingOf } from '../support/acting.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { csrfFrom, runCommand, signedIn } from '../support/directory-fixtures.js';
import { createPerson } from '../support/oauth-factory.js';
import type { PageAgent } from '../support/page-agent.js';

/**
 * Issue #37 §1–§2: every change to the directory — servers, channels, roles, members, invite
 * links and invitations — made through the pages (or the CLI) writes one audit row in the
 * change's own commit: what, Discord's action type, who, on what, in which server, from which
 * address and request, and why. A refused change writes none.
 */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

type Signed = { agent: PageAgent; person: Person };

interface Place {
  owner: Signed;
  server: CreatedServer;
  channelId: string;
}

/** A server owned by a signed-in person, made through the service (so it writes its own row, left out by the counts below). */
async function place(name = 'Audited'): Promise<Place> {
  const owner = await signedIn(t);
  const server = await createServer(t.services, personActingOf(owner.person.id), { name });
  return { owner, server, channelId: server.channels[0]!.id };
}

let requests = 0;

/**
 * Posts a form as the page would (its CSRF token from `pageUrl`), with its own request id and,
 * when given, an `X-Audit-Log-Reason`. Returns the response and the request id it carried.
 */
async function post(agent: PageAgent, pageUrl: string, action: string, fields: Record<string, string | string[]>, reason?: string): Promise<{ res: LightMyRequestResponse; requestId: string }> {
  const requestId = `directory-audit-${++requests}`;
  const csrf = await csrfFrom(agent, pageUrl);
  const headers: Record<string, string> = { 'x-request-id': requestId, ...(reason !== undefined ? { 'x-audit-log-reason': encodeURIComponent(reason) } : {}) };
  const res = await agent.postRaw(action, { ...fields, _csrf: csrf }, headers);
  return { res, requestId };
}

/** The audit rows of `action` in a server, oldest first, with ids and numbers as JavaScript reads them on both databases. */
async function rowsOf(serverId: string, action: string) {
  const rows = await t.services.db.selectFrom('audit_events').selectAll().where('server_id', '=', serverId).where('action', '=', action).orderBy('id').execute();
  return rows.map((row) => ({
    ...row,
    server_id: row.server_id === null ? null : String(row.server_id),
    actor_id: row.actor_id === null ? null : String(row.actor_id),
    action_type: row.action_type === null ? null : Number(row.action_type),
    changes: row.changes === null ? null : (JSON.parse(row.changes) as unknown),
    options: row.options === null ? null : (JSON.parse(row.options) as unknown),
  }));
}

/** Every audit row of a server but its creation's. */
async function changesIn(serverId: string) {
  const rows = await t.services.db.selectFrom('audit_events').select('action').where('server_id', '=', serverId).where('action', '!=', 'server.created').execute();
  return rows.map((r) => r.action);
}

/** What every row written by a signed-in person's page request holds. */
function byPerson(who: Person, requestId: string, serverId: string) {
  return { actor_kind: 'person', actor_id: who.id, server_id: serverId, address: '127.0.0.1', request_id: requestId };
}

/** A signed-in member of the place holding `permissions` through a role (none: a plain member). */
async function memberOf(p: Place, permissions?: bigint): Promise<Signed> {
  const member = await signedIn(t);
  const roles = permissions === undefined ? [] : [(await createRole(t.services, operatorActing(), p.server.id, { name: 'Given', permissions })).id];
  await addMember(t.services, operatorActing(), p.server.id, member.person.id, roles);
  return member;
}

describe('servers', () => {
  it('creating a server on the home page writes one server.created row: the person, the new server, the address and the request', async () => {
    const { agent, person } = await signedIn(t);
    const { res, requestId } = await post(agent, '/', '/servers', { name: 'Fresh' });
    expect(res.statusCode).toBe(303);
    const serverId = String(res.headers.location).split('/').pop()!;
    const rows = await rowsOf(serverId, 'server.created');
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ ...byPerson(person, requestId, serverId), action_type: null, target_id: serverId, reason: null });
    // One row for the whole creation: its @everyone role, the owner's membership and #general come with it.
    expect(await changesIn(serverId)).toEqual([]);
  });

  it('a server name refused (400) writes no row', async () => {
    const { agent, person } = await signedIn(t);
    const before = await t.services.db.selectFrom('audit_events').select('id').where('actor_id', '=', person.id).execute();
    const { res } = await post(agent, '/', '/servers', { name: ' ' });
    expect(res.statusCode).toBe(400);
    const after = await t.services.db.selectFrom('audit_events').select('id').where('actor_id', '=', person.id).execute();
    expect(after).toHaveLength(before.length);
  });

  it('saving the overview writes one GUILD_UPDATE (1) row with the name old → new, and the reason the request gave', async () => {
    const p = await place('Before');
    const { res, requestId } = await post(p.owner.agent, `/servers/${p.server.id}/settings`, `/servers/${p.server.id}/settings`, { name: 'After', iconUrl: '' }, 'Rebrand — été');
    expect(res.statusCode).toBe(303);
    const rows = await rowsOf(p.server.id, 'server.updated');
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      ...byPerson(p.owner.person, requestId, p.server.id),
      action_type: AuditLogEvent.GuildUpdate,
      target_id: p.server.id,
      reason: 'Rebrand — été',
      changes: [{ key: 'name', old_value: 'Before', new_value: 'After' }],
    });
  });

  it('a member without Manage server saving the overview gets 403 and writes no row', async () => {
    const p = await place();
    const member = await memberOf(p);
    const before = await changesIn(p.server.id);
    const { res } = await post(member.agent, '/', `/servers/${p.server.id}/settings`, { name: 'Taken over', iconUrl: '' });
    expect(res.statusCode).toBe(403);
    expect(await changesIn(p.server.id)).toEqual(before);
  });

  it('deleting a server writes one server.deleted row naming it, which stays after the server is gone', async () => {
    const p = await place('Doomed');
    const { res, requestId } = await post(p.owner.agent, `/servers/${p.server.id}/delete`, `/servers/${p.server.id}/delete`, {});
    expect(res.statusCode).toBe(303);
    const rows = await rowsOf(p.server.id, 'server.deleted');
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ ...byPerson(p.owner.person, requestId, p.server.id), target_id: p.server.id, changes: [{ key: 'name', old_value: 'Doomed' }] });
  });
});

describe('channels', () => {
  it('creating a channel writes one CHANNEL_CREATE (10) row with its name', async () => {
    const p = await place();
    const { res, requestId } = await post(p.owner.agent, `/servers/${p.server.id}/settings/channels`, `/servers/${p.server.id}/channels`, { name: 'news', topic: '' });
    expect(res.statusCode).toBe(303);
    const rows = await rowsOf(p.server.id, 'channel.created');
    expect(rows).toHaveLength(1);
    const channel = await t.services.db.selectFrom('channels').select('id').where('server_id', '=', p.server.id).where('name', '=', 'news').executeTakeFirstOrThrow();
    expect(rows[0]).toMatchObject({ ...byPerson(p.owner.person, requestId, p.server.id), action_type: AuditLogEvent.ChannelCreate, target_id: String(channel.id), changes: [{ key: 'name', new_value: 'news' }] });
  });

  it('a channel name refused (400) writes no row', async () => {
    const p = await place();
    const { res } = await post(p.owner.agent, `/servers/${p.server.id}/settings/channels`, `/servers/${p.server.id}/channels`, { name: '!!!', topic: '' });
    expect(res.statusCode).toBe(400);
    expect(await changesIn(p.server.id)).toEqual([]);
  });

  it('a member without Manage channels creating one gets 403 and writes no row', async () => {
    const p = await place();
    const member = await memberOf(p);
    const before = await changesIn(p.server.id);
    const { res } = await post(member.agent, '/', `/servers/${p.server.id}/channels`, { name: 'mine', topic: '' });
    expect(res.statusCode).toBe(403);
    expect(await changesIn(p.server.id)).toEqual(before);
  });

  it('saving a channel writes one CHANNEL_UPDATE (11) row with the name and topic old → new', async () => {
    const p = await place();
    const { res, requestId } = await post(p.owner.agent, `/servers/${p.server.id}/settings/channels`, `/servers/${p.server.id}/channels/${p.channelId}`, { name: 'lobby', topic: 'Say hi' });
    expect(res.statusCode).toBe(303);
    const rows = await rowsOf(p.server.id, 'channel.updated');
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      ...byPerson(p.owner.person, requestId, p.server.id),
      action_type: AuditLogEvent.ChannelUpdate,
      target_id: p.channelId,
      changes: [
        { key: 'name', old_value: 'general', new_value: 'lobby' },
        { key: 'topic', old_value: null, new_value: 'Say hi' },
      ],
    });
  });

  it('moving a channel down writes one CHANNEL_UPDATE (11) row with its position old → new', async () => {
    const p = await place();
    await post(p.owner.agent, `/servers/${p.server.id}/settings/channels`, `/servers/${p.server.id}/channels`, { name: 'second', topic: '' });
    const { res, requestId } = await post(p.owner.agent, `/servers/${p.server.id}/settings/channels`, `/servers/${p.server.id}/channels/${p.channelId}/move`, { direction: 'down' });
    expect(res.statusCode).toBe(303);
    const rows = await rowsOf(p.server.id, 'channel.updated');
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ ...byPerson(p.owner.person, requestId, p.server.id), action_type: AuditLogEvent.ChannelUpdate, target_id: p.channelId, changes: [{ key: 'position', old_value: 0, new_value: 1 }] });
  });

  it('deleting a channel writes one CHANNEL_DELETE (12) row naming it', async () => {
    const p = await place();
    const { res, requestId } = await post(p.owner.agent, `/servers/${p.server.id}/channels/${p.channelId}/delete`, `/servers/${p.server.id}/channels/${p.channelId}/delete`, {});
    expect(res.statusCode).toBe(303);
    const rows = await rowsOf(p.server.id, 'channel.deleted');
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ ...byPerson(p.owner.person, requestId, p.server.id), action_type: AuditLogEvent.ChannelDelete, target_id: p.channelId, changes: [{ key: 'name', old_value: 'general' }] });
  });
});

describe('roles', () => {
  it('creating a role writes one ROLE_CREATE (30) row with its name, permissions as a decimal string and colour', async () => {
    const p = await place();
    const { res, requestId } = await post(p.owner.agent, `/servers/${p.server.id}/settings/roles`, `/servers/${p.server.id}/roles`, { name: 'Mods', color: '#5865f2', permissions: ['KICK_MEMBERS', 'MANAGE_MESSAGES'] });
    expect(res.statusCode).toBe(303);
    const rows = await rowsOf(p.server.id, 'role.created');
    expect(rows).toHaveLength(1);
    const role = await t.services.db.selectFrom('roles').select('id').where('server_id', '=', p.server.id).where('name', '=', 'Mods').executeTakeFirstOrThrow();
    expect(rows[0]).toMatchObject({
      ...byPerson(p.owner.person, requestId, p.server.id),
      action_type: AuditLogEvent.RoleCreate,
      target_id: String(role.id),
      changes: [
        { key: 'name', new_value: 'Mods' },
        { key: 'permissions', new_value: (Permission.KICK_MEMBERS | Permission.MANAGE_MESSAGES).toString() },
        { key: 'color', new_value: 0x5865f2 },
      ],
    });
  });

  it('a member without Manage roles creating one gets 403 and writes no row', async () => {
    const p = await place();
    const member = await memberOf(p);
    const before = await changesIn(p.server.id);
    const { res } = await post(member.agent, '/', `/servers/${p.server.id}/roles`, { name: 'Mine', color: '#000000', permissions: [] });
    expect(res.statusCode).toBe(403);
    expect(await changesIn(p.server.id)).toEqual(before);
  });

  it('saving a role writes one ROLE_UPDATE (31) row with name, permissions and colour old → new', async () => {
    const p = await place();
    const role = await createRole(t.services, operatorActing(), p.server.id, { name: 'Helpers', permissions: Permission.KICK_MEMBERS, color: 0 });
    const before = (await rowsOf(p.server.id, 'role.updated')).length;
    const url = `/servers/${p.server.id}/roles/${role.id}`;
    const { res, requestId } = await post(p.owner.agent, `/servers/${p.server.id}/settings/roles/${role.id}`, url, { name: 'Stewards', color: '#00ff00', permissions: ['MANAGE_MESSAGES'] });
    expect(res.statusCode).toBe(303);
    const rows = (await rowsOf(p.server.id, 'role.updated')).slice(before);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      ...byPerson(p.owner.person, requestId, p.server.id),
      action_type: AuditLogEvent.RoleUpdate,
      target_id: role.id,
      changes: [
        { key: 'name', old_value: 'Helpers', new_value: 'Stewards' },
        { key: 'permissions', old_value: Permission.KICK_MEMBERS.toString(), new_value: Permission.MANAGE_MESSAGES.toString() },
        { key: 'color', old_value: 0, new_value: 0x00ff00 },
      ],
    });
  });

  it('deleting a role writes one ROLE_DELETE (32) row naming it', async () => {
    const p = await place();
    const role = await createRole(t.services, operatorActing(), p.server.id, { name: 'Temporary', permissions: 0n });
    const { res, requestId } = await post(p.owner.agent, `/servers/${p.server.id}/settings/roles/${role.id}`, `/servers/${p.server.id}/roles/${role.id}/delete`, {});
    expect(res.statusCode).toBe(303);
    const rows = await rowsOf(p.server.id, 'role.deleted');
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ ...byPerson(p.owner.person, requestId, p.server.id), action_type: AuditLogEvent.RoleDelete, target_id: role.id, changes: [{ key: 'name', old_value: 'Temporary' }] });
  });
});

describe('members', () => {
  it('changing a member’s roles writes one MEMBER_ROLE_UPDATE (25) row with the roles added and removed', async () => {
    const p = await place();
    const [a, b] = [
      await createRole(t.services, operatorActing(), p.server.id, { name: 'A', permissions: 0n }),
      await createRole(t.services, operatorActing(), p.server.id, { name: 'B', permissions: 0n }),
    ];
    const member = await createPerson(t);
    await addMember(t.services, operatorActing(), p.server.id, member.id, [a.id]);
    const { res, requestId } = await post(p.owner.agent, `/servers/${p.server.id}/settings/members`, `/servers/${p.server.id}/members/${member.id}/roles`, { roles: [b.id] });
    expect(res.statusCode).toBe(303);
    const rows = (await rowsOf(p.server.id, 'member.roles_updated')).filter((r) => r.actor_kind === 'person');
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      ...byPerson(p.owner.person, requestId, p.server.id),
      action_type: AuditLogEvent.MemberRoleUpdate,
      target_id: member.id,
      changes: [
        { key: '$add', new_value: b.id },
        { key: '$remove', new_value: a.id },
      ],
    });
  });

  it('removing a member writes one MEMBER_KICK (20) row about them', async () => {
    const p = await place();
    const member = await createPerson(t);
    await addMember(t.services, operatorActing(), p.server.id, member.id);
    const { res, requestId } = await post(p.owner.agent, `/servers/${p.server.id}/members/${member.id}/remove`, `/servers/${p.server.id}/members/${member.id}/remove`, {});
    expect(res.statusCode).toBe(303);
    const rows = await rowsOf(p.server.id, 'member.removed');
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ ...byPerson(p.owner.person, requestId, p.server.id), action_type: AuditLogEvent.MemberKick, target_id: member.id, reason: null });
  });

  it('a member without Kick members removing another gets 403 and writes no row', async () => {
    const p = await place();
    const member = await memberOf(p);
    const other = await createPerson(t);
    await addMember(t.services, operatorActing(), p.server.id, other.id);
    const before = await changesIn(p.server.id);
    const { res } = await post(member.agent, '/', `/servers/${p.server.id}/members/${other.id}/remove`, {});
    expect(res.statusCode).toBe(403);
    expect(await changesIn(p.server.id)).toEqual(before);
  });

  it('leaving a server writes one member.removed row by the member themselves, without Discord’s kick type, saying they left', async () => {
    const p = await place();
    const member = await memberOf(p);
    const { res, requestId } = await post(member.agent, `/servers/${p.server.id}/leave`, `/servers/${p.server.id}/leave`, {});
    expect(res.statusCode).toBe(303);
    const rows = await rowsOf(p.server.id, 'member.removed');
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ ...byPerson(member.person, requestId, p.server.id), action_type: null, target_id: member.person.id, reason: 'left' });
  });

  it('joining through an invite link writes one member.joined row by the person who joined', async () => {
    const p = await place();
    const { res: created } = await post(p.owner.agent, `/servers/${p.server.id}/settings/invites`, `/servers/${p.server.id}/invites`, { expiresIn: 'never', maxUses: '' });
    expect(created.statusCode).toBe(303);
    const page = await p.owner.agent.get(String(created.headers.location));
    const code = /\/invite\/(ghinv_[A-Za-z0-9_-]+)/.exec(page.body)?.[1];
    expect(code).toBeDefined();
    const joiner = await signedIn(t);
    const { res, requestId } = await post(joiner.agent, `/invite/${code}`, `/invite/${code}`, {});
    expect(res.statusCode).toBe(303);
    const rows = await rowsOf(p.server.id, 'member.joined');
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ ...byPerson(joiner.person, requestId, p.server.id), action_type: null, target_id: joiner.person.id });
  });

  it('accepting an invitation writes one member.joined row by the person who accepted', async () => {
    const p = await place();
    const invitee = await signedIn(t);
    expect((await post(p.owner.agent, `/servers/${p.server.id}/settings/members`, `/servers/${p.server.id}/members`, { username: invitee.person.username })).res.statusCode).toBe(303);
    const invitation = await t.services.db.selectFrom('member_invitations').select('id').where('server_id', '=', p.server.id).executeTakeFirstOrThrow();
    const { res, requestId } = await post(invitee.agent, '/', `/invitations/${String(invitation.id)}/accept`, {});
    expect(res.statusCode).toBe(303);
    const rows = await rowsOf(p.server.id, 'member.joined');
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ ...byPerson(invitee.person, requestId, p.server.id), target_id: invitee.person.id });
  });
});

describe('invite links and invitations', () => {
  it('creating an invite link writes one INVITE_CREATE (40) row naming the invite by its id, never by its code', async () => {
    const p = await place();
    const { res, requestId } = await post(p.owner.agent, `/servers/${p.server.id}/settings/invites`, `/servers/${p.server.id}/invites`, { expiresIn: 'never', maxUses: '5' });
    expect(res.statusCode).toBe(303);
    const invite = await t.services.db.selectFrom('invites').select('id').where('server_id', '=', p.server.id).executeTakeFirstOrThrow();
    const rows = await rowsOf(p.server.id, 'invite.created');
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ ...byPerson(p.owner.person, requestId, p.server.id), action_type: AuditLogEvent.InviteCreate, target_id: String(invite.id) });
    const page = await p.owner.agent.get(String(res.headers.location));
    const code = /\/invite\/(ghinv_[A-Za-z0-9_-]+)/.exec(page.body)?.[1];
    expect(code).toBeDefined();
    expect(JSON.stringify(rows[0], (_key, value: unknown) => (typeof value === 'bigint' ? value.toString() : value))).not.toContain(code);
  });

  it('revoking an invite link writes one INVITE_DELETE (42) row', async () => {
    const p = await place();
    await post(p.owner.agent, `/servers/${p.server.id}/settings/invites`, `/servers/${p.server.id}/invites`, { expiresIn: 'never', maxUses: '' });
    const invite = await t.services.db.selectFrom('invites').select('id').where('server_id', '=', p.server.id).executeTakeFirstOrThrow();
    const { res, requestId } = await post(p.owner.agent, `/servers/${p.server.id}/settings/invites`, `/servers/${p.server.id}/invites/${String(invite.id)}/delete`, {});
    expect(res.statusCode).toBe(303);
    const rows = await rowsOf(p.server.id, 'invite.deleted');
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ ...byPerson(p.owner.person, requestId, p.server.id), action_type: AuditLogEvent.InviteDelete, target_id: String(invite.id) });
  });

  it('inviting a person by username writes one invitation.created row about them; a username nobody has writes none', async () => {
    const p = await place();
    const invitee = await createPerson(t);
    const { res, requestId } = await post(p.owner.agent, `/servers/${p.server.id}/settings/members`, `/servers/${p.server.id}/members`, { username: invitee.username });
    expect(res.statusCode).toBe(303);
    expect((await post(p.owner.agent, `/servers/${p.server.id}/settings/members`, `/servers/${p.server.id}/members`, { username: 'nobody_has_this_name' })).res.statusCode).toBe(303);
    const rows = await rowsOf(p.server.id, 'invitation.created');
    expect(rows).toHaveLength(1);
    const invitation = await t.services.db.selectFrom('member_invitations').select('id').where('server_id', '=', p.server.id).executeTakeFirstOrThrow();
    expect(rows[0]).toMatchObject({ ...byPerson(p.owner.person, requestId, p.server.id), target_id: invitee.id, options: { invitation_id: String(invitation.id) } });
  });

  it('cancelling an invitation writes one invitation.deleted row by whoever cancelled it', async () => {
    const p = await place();
    const invitee = await createPerson(t);
    await post(p.owner.agent, `/servers/${p.server.id}/settings/members`, `/servers/${p.server.id}/members`, { username: invitee.username });
    const invitation = await t.services.db.selectFrom('member_invitations').select('id').where('server_id', '=', p.server.id).executeTakeFirstOrThrow();
    const { res, requestId } = await post(p.owner.agent, `/servers/${p.server.id}/settings/invites`, `/servers/${p.server.id}/invitations/${String(invitation.id)}/cancel`, {});
    expect(res.statusCode).toBe(303);
    const rows = await rowsOf(p.server.id, 'invitation.deleted');
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ ...byPerson(p.owner.person, requestId, p.server.id), target_id: invitee.id, options: { invitation_id: String(invitation.id) } });
  });

  it('declining an invitation writes one invitation.deleted row by the invited person', async () => {
    const p = await place();
    const invitee = await signedIn(t);
    await post(p.owner.agent, `/servers/${p.server.id}/settings/members`, `/servers/${p.server.id}/members`, { username: invitee.person.username });
    const invitation = await t.services.db.selectFrom('member_invitations').select('id').where('server_id', '=', p.server.id).executeTakeFirstOrThrow();
    const { res, requestId } = await post(invitee.agent, '/', `/invitations/${String(invitation.id)}/decline`, {});
    expect(res.statusCode).toBe(303);
    const rows = await rowsOf(p.server.id, 'invitation.deleted');
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ ...byPerson(invitee.person, requestId, p.server.id), target_id: invitee.person.id });
  });
});

describe('the CLI', () => {
  it('servers create, channels create, roles create and members add are recorded as the operator’s, with no address or request', async () => {
    const owner = await createPerson(t);
    const member = await createPerson(t);
    const server = await runCommand(t, 'servers create', ['--owner', owner.username, '--name', 'From the shell']);
    const serverId = String(server.id);
    await runCommand(t, 'channels create', ['--server', serverId, '--name', 'ops']);
    await runCommand(t, 'roles create', ['--server', serverId, '--name', 'Ops', '--permissions', '0']);
    await runCommand(t, 'members add', ['--server', serverId, '--username', member.username]);
    const rows = await t.services.db.selectFrom('audit_events').select(['action', 'actor_kind', 'actor_id', 'address', 'request_id']).where('server_id', '=', serverId).orderBy('id').execute();
    expect(rows.map((r) => r.action)).toEqual(['server.created', 'channel.created', 'role.created', 'member.joined']);
    for (const row of rows) expect(row).toMatchObject({ actor_kind: 'operator', actor_id: null, address: null, request_id: null });
  });
});
