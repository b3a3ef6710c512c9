import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Acting, Who } from '../../src/core/acting.js';
import { Permission } from '../../src/core/permissions.js';
import type { DomainEvent } from '../../src/events/domain-events.js';
import { addMember, setMemberRoles } from '../../src/modules/directory/members.service.js';
import { createRole } from '../../src/modules/directory/roles.service.js';
import { createServer } from '../../src/modules/directory/servers.service.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { ANONYMOUS, actingOf, operatorActing, personActingOf } from '../support/acting.js';
import { given } from '../support/given.js';
import { PageAgent } from '../support/page-agent.js';
import { registerPerson } from '../../src/modules/accounts/accounts.service.js';

/**
 * Issue #37 §5: Server settings → Audit log (View audit log; entries in words, without addresses;
 * filters by person and action; 50 per page with a `before` cursor) and Settings → Security (the
 * person's own security events, with the address of each sign-in).
 */

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

function emit(acting: Acting<Who>, event: DomainEvent): Promise<void> {
  return t.services.bus.emitted(t.services.db, acting, event);
}

/** Acting from a request: the address and request id pages would record. */
function fromRequest<A extends Who>(actor: A): Acting<A> {
  return { actor, address: '203.0.113.9', requestId: 'req-audit-1', at: t.clock.now(), reason: null };
}

async function ownedServer(): Promise<{ owner: { agent: PageAgent; person: { id: string; username: string; name: string } }; serverId: string }> {
  const owner = await given.signedIn(t, { name: 'Alice' });
  const server = await createServer(t.services, personActingOf(owner.person.id), { name: 'Workshop' });
  return { owner, serverId: server.id };
}

const entriesOf = (body: string): string[] => [...body.matchAll(/<li class="audit-entry"[^>]*>([\s\S]*?)<\/li>/g)].map((m) => (m[1] ?? '').replace(/<[^>]+>/g, '').replace(/\s+/g, ' ').trim());

describe('Server settings → Audit log', () => {
  it('the owner sees the entries in words, newest first, with no address or request id; the sidebar links it', async () => {
    const { owner, serverId } = await ownedServer();
    const posted = await owner.agent.submit(`/servers/${serverId}/settings/roles`, `/servers/${serverId}/roles`, { name: 'Moderators', color: '#3366ff', permissions: 'KICK_MEMBERS' });
    expect(posted.statusCode).toBe(303);
    await emit(fromRequest({ kind: 'person', id: owner.person.id }), { type: 'channel.created', serverId, channelId: '7001', name: 'releases' });

    const page = await owner.agent.get(`/servers/${serverId}/settings/audit-log`);
    expect(page.statusCode).toBe(200);
    const entries = entriesOf(page.body);
    expect(entries[0]).toMatch(/^Alice created the channel #releases · \d{4}-\d\d-\d\d \d\d:\d\d UTC$/);
    expect(entries).toContainEqual(expect.stringMatching(/^Alice created the role Moderators · /));
    expect(page.body).not.toContain('203.0.113.9');
    expect(page.body).not.toContain('req-audit-1');
    expect(page.body).toContain(`href="/servers/${serverId}/settings/audit-log" class="active" aria-current="page">Audit log</a>`);
    const overview = await owner.agent.get(`/servers/${serverId}/settings`);
    expect(overview.body).toContain(`href="/servers/${serverId}/settings/audit-log">Audit log</a>`);
  });

  it('a member’s roles changed and the member removed through Settings → Members read as such, and as MEMBER_ROLE_UPDATE and MEMBER_KICK in the API', async () => {
    const { owner, serverId } = await ownedServer();
    const carol = await given.person(t, { name: 'Carol' });
    await addMember(t.services, operatorActing(), serverId, carol.id);
    const mods = await createRole(t.services, operatorActing(), serverId, { name: 'Mods', permissions: 0n });
    const members = `/servers/${serverId}/settings/members`;
    expect((await owner.agent.submit(members, `/servers/${serverId}/members/${carol.id}/roles`, { roles: mods.id })).statusCode).toBe(303);
    expect((await owner.agent.submit(members, `/servers/${serverId}/members/${carol.id}/remove`, {})).statusCode).toBe(303);

    const words = entriesOf((await owner.agent.get(`/servers/${serverId}/settings/audit-log?person=${owner.person.username}`)).body).map((e) => e.split(' · ')[0]);
    expect(words.slice(0, 2)).toEqual(['Alice removed Carol from the server', 'Alice changed the roles of Carol: gave Mods']);

    const bot = await given.bot(t);
    await addMember(t.services, operatorActing(), serverId, bot.botUserId);
    const readers = await createRole(t.services, operatorActing(), serverId, { name: 'Readers', permissions: Permission.VIEW_AUDIT_LOG });
    await setMemberRoles(t.services, operatorActing(), serverId, bot.botUserId, [readers.id]);
    const api = (await t.app.inject({ method: 'GET', url: `/api/v1/guilds/${serverId}/audit-logs?user_id=${owner.person.id}`, headers: bot.headers })).json() as { audit_log_entries: Array<{ action_type: number; target_id: string; changes?: unknown[] }>; users: Array<{ id: string }> };
    expect(api.audit_log_entries.slice(0, 2)).toEqual([
      expect.objectContaining({ action_type: 20, target_id: carol.id }),
      expect.objectContaining({ action_type: 25, target_id: carol.id, changes: [{ key: '$add', new_value: [{ id: mods.id, name: 'Mods' }] }] }),
    ]);
    expect(api.users.map((u) => u.id)).toEqual(expect.arrayContaining([owner.person.id, carol.id]));
  });

  it('filters by person (username) and by action, and says so when the username is no one', async () => {
    const { owner, serverId } = await ownedServer();
    const bob = await given.person(t, { username: `bob${Date.now().toString(36)}`, name: 'Bob' });
    await addMember(t.services, operatorActing(), serverId, bob.id);
    await emit(fromRequest({ kind: 'person', id: owner.person.id }), { type: 'role.created', serverId, roleId: '7101', name: 'Ops', permissions: '0', color: 0 });
    await emit(fromRequest({ kind: 'person', id: bob.id }), { type: 'channel.created', serverId, channelId: '7102', name: 'bobs' });
    await emit(fromRequest({ kind: 'person', id: bob.id }), { type: 'role.deleted', serverId, roleId: '7103', name: 'Old' });

    const byBob = entriesOf((await owner.agent.get(`/servers/${serverId}/settings/audit-log?person=${bob.username}`)).body);
    expect(byBob.map((e) => e.split(' · ')[0])).toEqual(['Bob deleted the role Old', 'Bob created the channel #bobs']);
    const roleDeletes = entriesOf((await owner.agent.get(`/servers/${serverId}/settings/audit-log?action=role.deleted`)).body);
    expect(roleDeletes.map((e) => e.split(' · ')[0])).toEqual(['Bob deleted the role Old']);
    const both = await owner.agent.get(`/servers/${serverId}/settings/audit-log?person=${bob.username}&action=channel.created`);
    expect(entriesOf(both.body).map((e) => e.split(' · ')[0])).toEqual(['Bob created the channel #bobs']);
    expect(both.body).toContain('<option value="channel.created" selected>');

    const nobody = await owner.agent.get(`/servers/${serverId}/settings/audit-log?person=nobody_here_at_all`);
    expect(nobody.statusCode).toBe(200);
    expect(nobody.body).toContain('No one is called “nobody_here_at_all”.');
    expect(entriesOf(nobody.body)).toEqual([]);
  });

  it('shows 50 entries a page, and Older entries leads to the rest through a before cursor', async () => {
    const { owner, serverId } = await ownedServer();
    const acting = fromRequest({ kind: 'person', id: owner.person.id } as const);
    for (let i = 0; i < 55; i += 1) await emit(acting, { type: 'channel.created', serverId, channelId: String(7200 + i), name: `c${i}` });
    const first = await owner.agent.get(`/servers/${serverId}/settings/audit-log?action=channel.created`);
    const firstEntries = entriesOf(first.body);
    expect(firstEntries).toHaveLength(50);
    expect(firstEntries[0]).toMatch(/^Alice created the channel #c54 /);
    const next = /href="([^"]+)" rel="next"/.exec(first.body)?.[1]?.replaceAll('&amp;', '&');
    expect(next).toMatch(/before=\d+/);
    const second = await owner.agent.get(next as string);
    expect(entriesOf(second.body).map((e) => e.split(' · ')[0])).toEqual(['c4', 'c3', 'c2', 'c1', 'c0'].map((c) => `Alice created the channel #${c}`));
    expect(second.body).not.toContain('rel="next"');
  });

  it('a member without View audit log gets the 403 page and no link; with it through a role, the page; a non-member 404', async () => {
    const { serverId } = await ownedServer();
    const member = await given.signedIn(t);
    await addMember(t.services, operatorActing(), serverId, member.person.id);
    const kicker = await createRole(t.services, operatorActing(), serverId, { name: 'Kickers', permissions: Permission.KICK_MEMBERS });
    await setMemberRoles(t.services, operatorActing(), serverId, member.person.id, [kicker.id]);
    const refused = await member.agent.get(`/servers/${serverId}/settings/audit-log`);
    expect(refused.statusCode).toBe(403);
    expect(refused.body).toContain('View audit log');
    expect((await member.agent.get(`/servers/${serverId}/settings`)).body).not.toContain('/settings/audit-log');

    const readers = await createRole(t.services, operatorActing(), serverId, { name: 'Readers', permissions: Permission.VIEW_AUDIT_LOG });
    await setMemberRoles(t.services, operatorActing(), serverId, member.person.id, [kicker.id, readers.id]);
    expect((await member.agent.get(`/servers/${serverId}/settings/audit-log`)).statusCode).toBe(200);

    const stranger = await given.signedIn(t);
    expect((await stranger.agent.get(`/servers/${serverId}/settings/audit-log`)).statusCode).toBe(404);
  });
});

describe('Settings → Security (the person’s own account activity)', () => {
  it('lists their sign-ins with address and time and failed sign-ins on their account, newest first; not other people’s', async () => {
    const password = 'correct horse battery';
    const username = `sec${Date.now().toString(36)}`;
    const registered = await registerPerson(t.services, actingOf(ANONYMOUS), { username, name: username, email: null, password });
    // The real forms: a failed sign-in on this account, then the person signing in.
    const stranger = new PageAgent(t.app);
    const failed = await stranger.submit('/login', '/login', { username, password: 'wrong password 123' });
    expect(failed.statusCode).not.toBe(303);
    t.clock.advance(60_000);
    const me = { agent: new PageAgent(t.app), person: registered };
    expect((await me.agent.submit('/login', '/login', { username, password })).statusCode).toBe(303);
    const other = await given.person(t);
    await emit(fromRequest({ kind: 'person', id: other.id }), { type: 'signin.succeeded', userId: other.id });

    const page = await me.agent.get('/settings/security');
    expect(page.statusCode).toBe(200);
    const entries = entriesOf(page.body);
    expect(entries[0]).toMatch(/^Signed in · \d{4}-\d\d-\d\d \d\d:\d\d UTC · from 127\.0\.0\.1$/);
    expect(entries[1]).toMatch(/^A sign-in to your account failed \(wrong password\) · .* · from 127\.0\.0\.1$/);
    expect(entries).toHaveLength(2);
    expect(page.body).toContain('href="/settings/security" class="active" aria-current="page">Security</a>');
  });

  it('lists a sign-out, and apps authorized and removed by name, from the real forms and events', async () => {
    const password = 'correct horse battery';
    const username = `out${Date.now().toString(36)}`;
    const registered = await registerPerson(t.services, actingOf(ANONYMOUS), { username, name: username, email: null, password });
    const agent = new PageAgent(t.app);
    expect((await agent.submit('/login', '/login', { username, password })).statusCode).toBe(303);
    expect((await agent.submit('/settings/profile', '/logout', {})).statusCode).toBe(303);
    const client = await given.confidentialApp(t, { name: 'Weather Station' });
    await emit(fromRequest({ kind: 'person', id: registered.id }), { type: 'grant.created', applicationId: client.app.id, userId: registered.id, scopes: 'identify email' });
    await emit(fromRequest({ kind: 'person', id: registered.id }), { type: 'grant.revoked', applicationId: client.app.id, userId: registered.id });
    expect((await agent.submit('/login', '/login', { username, password })).statusCode).toBe(303);

    const words = entriesOf((await agent.get('/settings/security')).body).map((e) => e.split(' · ')[0]);
    expect(words).toEqual(['Signed in', 'The access of Weather Station was removed', 'You authorized Weather Station (identify email)', 'A session signed out', 'Signed in']);
  });

  it('pages 50 at a time with Older activity', async () => {
    const me = await given.signedIn(t);
    for (let i = 0; i < 52; i += 1) await emit(fromRequest({ kind: 'person', id: me.person.id }), { type: 'signin.succeeded', userId: me.person.id });
    const first = await me.agent.get('/settings/security');
    expect(entriesOf(first.body)).toHaveLength(50);
    const next = /href="([^"]+)" rel="next"/.exec(first.body)?.[1];
    expect(next).toMatch(/^\/settings\/security\?before=\d+$/);
    expect(entriesOf((await me.agent.get(next as string)).body)).toHaveLength(2);
  });

  it('needs a signed-in person', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/settings/security' });
    expect(res.statusCode).toBe(303);
  });
});

describe('View audit log alone opens server settings', () => {
  it('a member holding only View audit log sees the settings link on the channel view, the overview and the Audit log link', async () => {
    const { serverId } = await ownedServer();
    const reader = await given.signedIn(t);
    const readers = await createRole(t.services, operatorActing(), serverId, { name: 'Readers', permissions: Permission.VIEW_AUDIT_LOG });
    await addMember(t.services, operatorActing(), serverId, reader.person.id, [readers.id]);
    const server = await t.services.db.selectFrom('channels').select('id').where('server_id', '=', serverId).executeTakeFirstOrThrow();
    const view = await reader.agent.get(`/channels/${String(server.id)}`);
    expect(view.statusCode).toBe(200);
    expect(view.body).toContain(`href="/servers/${serverId}/settings"`);
    const overview = await reader.agent.get(`/servers/${serverId}/settings`);
    expect(overview.statusCode).toBe(200);
    expect(overview.body).toContain(`href="/servers/${serverId}/settings/audit-log">Audit log</a>`);
  });
});
