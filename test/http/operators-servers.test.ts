import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CliUsageError } from '../../src/cli/command.js';
import { addMember } from '../../src/modules/directory/members.service.js';
import { findMember } from '../../src/modules/directory/members.repository.js';
import { getServer } from '../../src/modules/directory/servers.service.js';
import { transferServer } from '../../src/modules/directory/server-transfer.service.js';
import { operatorActing, personActingOf } from '../support/acting.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { runCommand, location } from '../support/directory-fixtures.js';
import { given } from '../support/given.js';

/**
 * Issue #39 §Servers: `gatehouse servers list|show|delete|transfer`, and the owner's transfer from
 * Server settings → Danger zone. As on Discord, the new owner must be a member (and here a
 * person). Runs on PostgreSQL too with TEST_DATABASE_URL.
 */

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

describe('gatehouse servers list / show / delete', () => {
  it('lists oldest first, paged, one owner with --owner; shows what deleting removes; deletes only with --yes off a terminal', async () => {
    const owner = await given.person(t);
    const a = await given.server(t, { owner, name: 'Alpha' });
    const b = await given.server(t, { owner, name: 'Beta' });
    const member = await given.person(t);
    await addMember(t.services, operatorActing(), b.id, member.id);

    const page1 = (await runCommand(t, 'servers list', ['--owner', `@${owner.username}`, '--limit', '1'])) as { servers: Array<{ id: string; name: string; owner_username: string }>; next_after: string | null };
    expect(page1.servers).toEqual([expect.objectContaining({ id: a.id, name: 'Alpha', owner_username: owner.username })]);
    const page2 = (await runCommand(t, 'servers list', ['--owner', owner.username, '--after', page1.next_after as string])) as typeof page1;
    expect(page2.servers.map((s) => s.id)).toEqual([b.id]);
    expect(page2.next_after).toBeNull();

    expect(await runCommand(t, 'servers show', ['--server', b.id])).toMatchObject({ id: b.id, owner_id: owner.id, channels: 1, members: 1, messages: 0 });

    const refused = await runCommand(t, 'servers delete', ['--server', b.id]).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(CliUsageError);
    expect((refused as Error).message).toContain('removes 1 channel, 0 messages, 0 webhooks, 0 roles, 1 member besides the owner');
    expect(await getServer(t.services, b.id)).toBeDefined();

    expect(await runCommand(t, 'servers delete', ['--server', b.id, '--yes'])).toMatchObject({ id: b.id, deleted: true, removed: { members: 1 } });
    expect(await getServer(t.services, b.id)).toBeUndefined();
    const row = await t.services.db.selectFrom('audit_events').selectAll().where('server_id', '=', b.id).where('action', '=', 'server.deleted').executeTakeFirst();
    expect(row?.actor_kind).toBe('operator');
  });

  it('an unknown server is a clear error naming the flag; an unknown owner is Unknown User', async () => {
    for (const id of ['123456789012345678', 'x']) {
      await expect(runCommand(t, 'servers show', ['--server', id])).rejects.toThrow(`--server: no server has the id "${id}"`);
      await expect(runCommand(t, 'servers delete', ['--server', id, '--yes'])).rejects.toThrow('--server: no server');
      await expect(runCommand(t, 'servers transfer', ['--server', id, '--to', 'someone', '--yes'])).rejects.toThrow('--server: no server');
    }
    await expect(runCommand(t, 'servers list', ['--owner', 'no-such-person-here'])).rejects.toMatchObject({ code: 10013 });
  });
});

describe('gatehouse servers transfer', () => {
  it('makes a member the owner (the previous owner stays a member), audited as the operator’s GUILD_UPDATE of owner_id', async () => {
    const server = await given.server(t);
    const heir = await given.person(t);
    await addMember(t.services, operatorActing(), server.id, heir.id);
    await expect(runCommand(t, 'servers transfer', ['--server', server.id, '--to', heir.username])).rejects.toBeInstanceOf(CliUsageError);
    expect((await getServer(t.services, server.id))?.ownerId).toBe(server.owner.id);

    const out = await runCommand(t, 'servers transfer', ['--server', server.id, '--to', heir.username, '--yes']);
    expect(out).toMatchObject({ id: server.id, owner_id: heir.id, owner_username: heir.username, previous_owner_id: server.owner.id });
    expect((await getServer(t.services, server.id))?.ownerId).toBe(heir.id);
    expect(await findMember(t.services.db, server.id, server.owner.id)).toBeDefined();
    const row = await t.services.db.selectFrom('audit_events').selectAll().where('server_id', '=', server.id).where('action', '=', 'server.transferred').executeTakeFirstOrThrow();
    expect(row.actor_kind).toBe('operator');
    expect(Number(row.action_type)).toBe(1);
    expect(JSON.parse(row.changes ?? '[]')).toEqual([{ key: 'owner_id', old_value: server.owner.id, new_value: heir.id }]);
  });

  it('refuses, changing nothing: someone who is not a member, a bot, the current owner, nobody by that name', async () => {
    const server = await given.server(t);
    const outsider = await given.person(t);
    const bot = await given.bot(t);
    const botUsername = (await t.services.db.selectFrom('users').select('username').where('id', '=', bot.botUserId).executeTakeFirstOrThrow()).username;
    await addMember(t.services, operatorActing(), server.id, bot.botUserId);
    const cases: Array<[string, string]> = [
      [outsider.username, 'is not a member of this server'],
      [botUsername, 'A bot cannot own a server'],
      [server.owner.username, 'already owns this server'],
      ['nobody-has-this-name', 'Nobody has that username'],
    ];
    for (const [to, words] of cases) {
      const refused = await runCommand(t, 'servers transfer', ['--server', server.id, '--to', to, '--yes']).catch((e: unknown) => e);
      expect(refused).toMatchObject({ code: 50035 });
      expect(JSON.stringify((refused as { errors: unknown }).errors)).toContain(words);
    }
    expect((await getServer(t.services, server.id))?.ownerId).toBe(server.owner.id);
  });

  it('a member who is not the owner may not transfer (50013); someone outside the server does not learn it exists (10004)', async () => {
    const server = await given.server(t);
    const member = await given.person(t);
    const outsider = await given.person(t);
    await addMember(t.services, operatorActing(), server.id, member.id);
    await expect(transferServer(t.services, personActingOf(member.id), server.id, { id: member.id })).rejects.toMatchObject({ status: 403, code: 50013 });
    await expect(transferServer(t.services, personActingOf(outsider.id), server.id, { id: member.id })).rejects.toMatchObject({ status: 404, code: 10004 });
  });
});

describe("PATCH /api/v1/guilds/{id} with owner_id (Discord's Modify Guild)", () => {
  it('a bot never owns a server here, so a member bot is refused 403 50013 and one outside 404 10004; nothing changes', async () => {
    const server = await given.server(t);
    const heir = await given.person(t);
    await addMember(t.services, operatorActing(), server.id, heir.id);
    const member = await given.bot(t);
    await addMember(t.services, operatorActing(), server.id, member.botUserId);
    const outsider = await given.bot(t);
    const patch = (headers: { authorization: string }, payload: Record<string, unknown>) =>
      t.app.inject({ method: 'PATCH', url: `/api/v1/guilds/${server.id}`, headers: { ...headers, 'content-type': 'application/json' }, payload });

    const refused = await patch(member.headers, { owner_id: heir.id });
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ code: 50013 });
    const unknown = await patch(outsider.headers, { owner_id: heir.id });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toMatchObject({ code: 10004 });
    expect((await getServer(t.services, server.id))?.ownerId).toBe(server.owner.id);

    const unchanged = await patch(member.headers, { name: 'ignored here' });
    expect(unchanged.statusCode).toBe(200);
    expect(unchanged.json()).toMatchObject({ id: server.id, owner_id: server.owner.id });
  });
});

describe('Server settings → Danger zone → Transfer ownership', () => {
  it('the owner picks a member (people only, not themselves), confirms, and the server is theirs', async () => {
    const { agent, person: owner } = await given.signedIn(t);
    const server = await given.server(t, { owner, name: 'Heirloom' });
    const { agent: heirAgent, person: heir } = await given.signedIn(t, { name: 'Heir Apparent' });
    const bot = await given.bot(t);
    await addMember(t.services, operatorActing(), server.id, heir.id);
    await addMember(t.services, operatorActing(), server.id, bot.botUserId);

    const settings = await agent.get(`/servers/${server.id}/settings`);
    expect(settings.body).toContain('Danger zone');
    expect(settings.body).toContain(`href="/servers/${server.id}/transfer"`);
    const page = await agent.get(`/servers/${server.id}/transfer`);
    expect(page.statusCode).toBe(200);
    const options = [...page.body.matchAll(/<option value="(\d+)"/g)].map((m) => m[1]);
    expect(options).toEqual([heir.id]);

    const unticked = await agent.submit(`/servers/${server.id}/transfer`, `/servers/${server.id}/transfer`, { owner_id: heir.id });
    expect(unticked.statusCode).toBe(400);
    expect(unticked.body).toContain('Tick the box');
    expect((await getServer(t.services, server.id))?.ownerId).toBe(owner.id);

    const done = await agent.submit(`/servers/${server.id}/transfer`, `/servers/${server.id}/transfer`, { owner_id: heir.id, acknowledge: 'yes' });
    expect(done.statusCode).toBe(303);
    expect(location(done)).toBe('/?done=ownership-transferred');
    expect((await getServer(t.services, server.id))?.ownerId).toBe(heir.id);
    const after = await agent.get(location(done));
    expect(after.body).toContain('Ownership transferred');
    expect((await agent.get(`/servers/${server.id}/settings`)).body).not.toContain(`href="/servers/${server.id}/transfer"`);
    expect((await agent.get(`/servers/${server.id}/transfer`)).statusCode).toBe(403);
    // The new owner reads it in the server's audit log.
    const log = await heirAgent.get(`/servers/${server.id}/settings/audit-log`);
    expect(log.statusCode).toBe(200);
    expect(log.body).toContain('transferred the server to Heir Apparent');
  });

  it('a choice that is not a member comes back beside the picker; a member who is not the owner gets 403', async () => {
    const { agent, person: owner } = await given.signedIn(t);
    const server = await given.server(t, { owner });
    const member = await given.signedIn(t);
    await addMember(t.services, operatorActing(), server.id, member.person.id);
    const stranger = await given.person(t);
    const refused = await agent.submit(`/servers/${server.id}/transfer`, `/servers/${server.id}/transfer`, { owner_id: stranger.id, acknowledge: 'yes' });
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toContain('is not a member of this server');
    expect((await getServer(t.services, server.id))?.ownerId).toBe(owner.id);
    expect((await member.agent.get(`/servers/${server.id}/transfer`)).statusCode).toBe(403);
  });

  it("with nobody else in the server the page says to invite the new owner first", async () => {
    const { agent, person: owner } = await given.signedIn(t);
    const server = await given.server(t, { owner });
    const page = await agent.get(`/servers/${server.id}/transfer`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('Invite the new owner first');
    expect(page.body).not.toContain('<select');
  });
});

describe('the developer portal shows a disabled app to its owner', () => {
  it('the app page says the operator disabled it, and the list marks it', async () => {
    const { agent, person: owner } = await given.signedIn(t);
    const client = await given.confidentialApp(t, { owner, name: 'Muted' });
    await runCommand(t, 'apps disable', ['--app', client.app.id, '--yes']);
    const detail = await agent.get(`/developers/applications/${client.app.id}`);
    expect(detail.statusCode).toBe(200);
    expect(detail.body).toContain('This application is disabled by the operator of this service.');
    expect((await agent.get('/developers/applications')).body).toContain('Disabled by the operator');
  });
});
