import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Permission } from '../../src/core/permissions.js';
import { addMember } from '../../src/modules/directory/members.service.js';
import { createRole } from '../../src/modules/directory/roles.service.js';
import { createServer, memberPermissions } from '../../src/modules/directory/servers.service.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { signedIn } from '../support/directory-fixtures.js';
import { createPerson } from '../support/oauth-factory.js';
import { operatorActing, personActingOf } from '../support/acting.js';

/** docs/permissions.md "Remove a member: Kick members or Manage server (+ reach)", reachable from the pages (issue #36 §5). */

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

describe('a moderator holding only Kick members', () => {
  it('reaches Server settings → Members, sees the member list, and removes a member from it', async () => {
    const owner = await signedIn(t);
    const server = await createServer(t.services, personActingOf(owner.person.id), { name: 'Kick only' });
    const kickers = await createRole(t.services, operatorActing(), server.id, { name: 'Kickers', permissions: Permission.KICK_MEMBERS });
    const moderator = await signedIn(t, { name: 'Mod' });
    await addMember(t.services, operatorActing(), server.id, moderator.person.id, [kickers.id]);
    const kim = await createPerson(t, { name: 'Kim Member' });
    await addMember(t.services, operatorActing(), server.id, kim.id);

    // The way there: the channel view links to the settings, whose sidebar lists Members.
    const channel = await moderator.agent.get(`/channels/${server.channels[0]?.id}`);
    expect(channel.statusCode).toBe(200);
    expect(channel.body).toContain(`href="/servers/${server.id}/settings"`);
    const overview = await moderator.agent.get(`/servers/${server.id}/settings`);
    expect(overview.statusCode).toBe(200);
    expect(overview.body).toContain(`href="/servers/${server.id}/settings/members"`);

    const members = await moderator.agent.get(`/servers/${server.id}/settings/members`);
    expect(members.statusCode).toBe(200);
    expect(members.body).toContain('Kim Member');
    expect(members.body).toContain(`href="/servers/${server.id}/members/${kim.id}/remove"`);
    // Only what Kick members allows: no role changes, no invitations, and never the owner.
    expect(members.body).not.toContain('Change roles');
    expect(members.body).not.toContain('Invite a member');
    expect(members.body).not.toContain(`/members/${owner.person.id}/remove`);

    const removed = await moderator.agent.submitAndFollow(`/servers/${server.id}/members/${kim.id}/remove`, `/servers/${server.id}/members/${kim.id}/remove`, {});
    expect(removed.location).toBe(`/servers/${server.id}/settings/members?done=member-removed`);
    expect(removed.statusCode).toBe(200);
    expect(removed.body).not.toContain('Kim Member');
    expect(await memberPermissions(t.services, server.id, kim.id)).toBeUndefined();
  });

  it('a member without Kick members, Manage server or Manage roles still cannot open the member list', async () => {
    const owner = await signedIn(t);
    const server = await createServer(t.services, personActingOf(owner.person.id), { name: 'No kick' });
    const plain = await signedIn(t);
    await addMember(t.services, operatorActing(), server.id, plain.person.id);
    expect((await plain.agent.get(`/servers/${server.id}/settings/members`)).statusCode).toBe(403);
    expect((await plain.agent.get(`/channels/${server.channels[0]?.id}`)).body).not.toContain(`href="/servers/${server.id}/settings"`);
  });
});
