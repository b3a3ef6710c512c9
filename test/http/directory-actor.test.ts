import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { person } from '../../src/core/actor.js';
import { AccessError } from '../../src/core/errors.js';
import { Permission } from '../../src/core/permissions.js';
import { createChannel, deleteChannel } from '../../src/modules/directory/channels.service.js';
import { createInvite, deleteInvite } from '../../src/modules/directory/invites.service.js';
import { addMember, inviteMember, removeMember, setMemberRoles } from '../../src/modules/directory/members.service.js';
import { createRole, deleteRole, getRoles, updateRole } from '../../src/modules/directory/roles.service.js';
import { createServer, deleteServer, renameServer, type CreatedServer } from '../../src/modules/directory/servers.service.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { createPerson } from '../support/oauth-factory.js';
import { actingOf, operatorActing, personActingOf } from '../support/acting.js';

/**
 * Issue #25 §4: the directory's services enforce who may act themselves (docs/permissions.md),
 * whatever calls them — not only the page routes in front of them.
 */
let t: TestApp;
let server: CreatedServer;
let ownerId: string;
let memberId: string;
let outsiderId: string;

beforeAll(async () => {
  t = await createTestApp();
  const owner = await createPerson(t, { username: 'actor_owner' });
  const member = await createPerson(t, { username: 'actor_member' });
  const outsider = await createPerson(t, { username: 'actor_outsider' });
  ownerId = owner.id;
  memberId = member.id;
  outsiderId = outsider.id;
  server = await createServer(t.services, personActingOf(ownerId), { name: 'Actors' });
  // A member with Manage channels and Kick members, but not Manage roles or Manage server.
  const helpers = await createRole(t.services, operatorActing(), server.id, { name: 'Helpers', permissions: Permission.MANAGE_CHANNELS | Permission.KICK_MEMBERS });
  await addMember(t.services, operatorActing(), server.id, memberId, [helpers.id]);
});
afterAll(async () => t.close());

const missingPermission = { status: 403, code: 50013 };
const unknownServer = { status: 404, code: 10004 };

describe('a member without Manage roles', () => {
  it('gets 403 (50013) from createRole itself, and no role is created', async () => {
    const before = await getRoles(t.services, server.id);
    const attempt = createRole(t.services, personActingOf(memberId), server.id, { name: 'Sneaky', permissions: 0n });
    await expect(attempt).rejects.toBeInstanceOf(AccessError);
    await expect(createRole(t.services, personActingOf(memberId), server.id, { name: 'Sneaky', permissions: 0n })).rejects.toMatchObject(missingPermission);
    expect(await getRoles(t.services, server.id)).toHaveLength(before.length);
  });

  it('gets 403 from updateRole, deleteRole and setMemberRoles, and nothing changes', async () => {
    const role = await createRole(t.services, personActingOf(ownerId), server.id, { name: 'Target', permissions: 0n });
    await expect(updateRole(t.services, personActingOf(memberId), server.id, role.id, { name: 'Renamed' })).rejects.toMatchObject(missingPermission);
    await expect(deleteRole(t.services, personActingOf(memberId), server.id, role.id)).rejects.toMatchObject(missingPermission);
    await expect(setMemberRoles(t.services, personActingOf(memberId), server.id, memberId, [role.id])).rejects.toMatchObject(missingPermission);
    expect((await getRoles(t.services, server.id)).find((r) => r.id === role.id)?.name).toBe('Target');
  });

  it('gets 403 from the services that need Manage server: rename, invite by username, revoke a link', async () => {
    await expect(renameServer(t.services, personActingOf(memberId), server.id, 'Mine now')).rejects.toMatchObject(missingPermission);
    await expect(inviteMember(t.services, personActingOf(memberId), server.id, 'actor_outsider')).rejects.toMatchObject(missingPermission);
    const { invite } = await createInvite(t.services, personActingOf(ownerId), server.id, {});
    await expect(deleteInvite(t.services, personActingOf(memberId), server.id, invite.id)).rejects.toMatchObject(missingPermission);
  });

  it('may do what their role allows: create and delete a channel', async () => {
    const channel = await createChannel(t.services, personActingOf(memberId), server.id, { name: 'helpers-only' });
    await expect(deleteChannel(t.services, personActingOf(memberId), server.id, channel.id)).resolves.toBeUndefined();
  });

  it('cannot remove the owner or anyone holding more than they do', async () => {
    await expect(removeMember(t.services, personActingOf(memberId), server.id, ownerId)).rejects.toMatchObject(missingPermission);
  });

  it('cannot delete a server they do not own', async () => {
    await expect(deleteServer(t.services, personActingOf(memberId), server.id)).rejects.toMatchObject(missingPermission);
  });
});

describe('someone outside the server', () => {
  it('is told the server does not exist (10004), whatever they try', async () => {
    const outsider = person(outsiderId);
    await expect(createRole(t.services, actingOf(outsider), server.id, { name: 'Nope', permissions: 0n })).rejects.toMatchObject(unknownServer);
    await expect(createChannel(t.services, actingOf(outsider), server.id, { name: 'nope' })).rejects.toMatchObject(unknownServer);
    await expect(renameServer(t.services, actingOf(outsider), server.id, 'Nope')).rejects.toMatchObject(unknownServer);
    await expect(deleteServer(t.services, actingOf(outsider), server.id)).rejects.toMatchObject(unknownServer);
    await expect(createInvite(t.services, personActingOf(outsiderId), server.id, {})).rejects.toMatchObject(unknownServer);
  });
});

describe('people add others only by invitation', () => {
  it('addMember refuses any actor but the operator (50013)', async () => {
    await expect(addMember(t.services, personActingOf(ownerId), server.id, outsiderId, [])).rejects.toMatchObject(missingPermission);
  });
});

describe('the owner', () => {
  it('may give out only the permissions they hold: everything, Administrator included', async () => {
    const role = await createRole(t.services, personActingOf(ownerId), server.id, { name: 'Admins', permissions: Permission.ADMINISTRATOR });
    expect(role.permissions).toBe(Permission.ADMINISTRATOR);
  });
});
