import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATOR, person } from '../../src/core/actor.js';
import { AccessError } from '../../src/core/errors.js';
import { Permission } from '../../src/core/permissions.js';
import { createChannel, deleteChannel } from '../../src/modules/directory/channels.service.js';
import { createInvite, deleteInvite } from '../../src/modules/directory/invites.service.js';
import { addMember, inviteMember, removeMember, setMemberRoles } from '../../src/modules/directory/members.service.js';
import { createRole, deleteRole, getRoles, updateRole } from '../../src/modules/directory/roles.service.js';
import { createServer, deleteServer, renameServer, type CreatedServer } from '../../src/modules/directory/servers.service.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { createPerson } from '../support/oauth-factory.js';

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
  server = await createServer(t.services, ownerId, { name: 'Actors' });
  // A member with Manage channels and Kick members, but not Manage roles or Manage server.
  const helpers = await createRole(t.services, server.id, { name: 'Helpers', permissions: Permission.MANAGE_CHANNELS | Permission.KICK_MEMBERS }, OPERATOR);
  await addMember(t.services, server.id, memberId, [helpers.id], OPERATOR);
});
afterAll(async () => t.close());

const missingPermission = { status: 403, code: 50013 };
const unknownServer = { status: 404, code: 10004 };

describe('a member without Manage roles', () => {
  it('gets 403 (50013) from createRole itself, and no role is created', async () => {
    const before = await getRoles(t.services, server.id);
    const attempt = createRole(t.services, server.id, { name: 'Sneaky', permissions: 0n }, person(memberId));
    await expect(attempt).rejects.toBeInstanceOf(AccessError);
    await expect(createRole(t.services, server.id, { name: 'Sneaky', permissions: 0n }, person(memberId))).rejects.toMatchObject(missingPermission);
    expect(await getRoles(t.services, server.id)).toHaveLength(before.length);
  });

  it('gets 403 from updateRole, deleteRole and setMemberRoles, and nothing changes', async () => {
    const role = await createRole(t.services, server.id, { name: 'Target', permissions: 0n }, person(ownerId));
    await expect(updateRole(t.services, server.id, role.id, { name: 'Renamed' }, person(memberId))).rejects.toMatchObject(missingPermission);
    await expect(deleteRole(t.services, server.id, role.id, person(memberId))).rejects.toMatchObject(missingPermission);
    await expect(setMemberRoles(t.services, server.id, memberId, [role.id], person(memberId))).rejects.toMatchObject(missingPermission);
    expect((await getRoles(t.services, server.id)).find((r) => r.id === role.id)?.name).toBe('Target');
  });

  it('gets 403 from the services that need Manage server: rename, invite by username, revoke a link', async () => {
    await expect(renameServer(t.services, server.id, 'Mine now', person(memberId))).rejects.toMatchObject(missingPermission);
    await expect(inviteMember(t.services, server.id, memberId, 'actor_outsider')).rejects.toMatchObject(missingPermission);
    const { invite } = await createInvite(t.services, server.id, ownerId, {});
    await expect(deleteInvite(t.services, server.id, invite.id, person(memberId))).rejects.toMatchObject(missingPermission);
  });

  it('may do what their role allows: create and delete a channel', async () => {
    const channel = await createChannel(t.services, server.id, { name: 'helpers-only' }, person(memberId));
    await expect(deleteChannel(t.services, server.id, channel.id, person(memberId))).resolves.toBeUndefined();
  });

  it('cannot remove the owner or anyone holding more than they do', async () => {
    await expect(removeMember(t.services, server.id, ownerId, person(memberId))).rejects.toMatchObject(missingPermission);
  });

  it('cannot delete a server they do not own', async () => {
    await expect(deleteServer(t.services, server.id, person(memberId))).rejects.toMatchObject(missingPermission);
  });
});

describe('someone outside the server', () => {
  it('is told the server does not exist (10004), whatever they try', async () => {
    const outsider = person(outsiderId);
    await expect(createRole(t.services, server.id, { name: 'Nope', permissions: 0n }, outsider)).rejects.toMatchObject(unknownServer);
    await expect(createChannel(t.services, server.id, { name: 'nope' }, outsider)).rejects.toMatchObject(unknownServer);
    await expect(renameServer(t.services, server.id, 'Nope', outsider)).rejects.toMatchObject(unknownServer);
    await expect(deleteServer(t.services, server.id, outsider)).rejects.toMatchObject(unknownServer);
    await expect(createInvite(t.services, server.id, outsiderId, {})).rejects.toMatchObject(unknownServer);
  });
});

describe('people add others only by invitation', () => {
  it('addMember refuses any actor but the operator (50013)', async () => {
    await expect(addMember(t.services, server.id, outsiderId, [], person(ownerId))).rejects.toMatchObject(missingPermission);
  });
});

describe('the owner', () => {
  it('may give out only the permissions they hold: everything, Administrator included', async () => {
    const role = await createRole(t.services, server.id, { name: 'Admins', permissions: Permission.ADMINISTRATOR }, person(ownerId));
    expect(role.permissions).toBe(Permission.ADMINISTRATOR);
  });
});
