import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Acting, Who } from '../../src/core/acting.js';
import { Permission } from '../../src/core/permissions.js';
import type { DomainEvent } from '../../src/events/domain-events.js';
import { addMember, setMemberRoles } from '../../src/modules/directory/members.service.js';
import { createRole } from '../../src/modules/directory/roles.service.js';
import { createServer } from '../../src/modules/directory/servers.service.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { actingOf, operatorActing, personActingOf } from '../support/acting.js';
import { given, type TestBot } from '../support/given.js';

/**
 * Issue #37 §5: Discord's GET /guilds/{guild.id}/audit-logs with bot credentials. Entries come
 * from real changes (a webhook a bot creates, a role the owner creates) and, for the paging cases,
 * from events emitted on the app's own bus: the recorder writes them as it writes every change.
 */

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

interface AuditLog {
  audit_log_entries: Array<{ id: string; user_id: string | null; target_id: string | null; action_type: number; changes?: Array<{ key: string; old_value?: unknown; new_value?: unknown }>; options?: Record<string, string>; reason?: string }>;
  users: Array<{ id: string; username: string; bot: boolean }>;
  webhooks: Array<{ id: string; name: string }>;
  integrations: Array<{ id: string; name: string; type: string; account: { id: string; name: string } }>;
  application_commands: unknown[];
  guild_scheduled_events: unknown[];
  threads: unknown[];
  auto_moderation_rules: unknown[];
}

/** A server owned by a new person, with `bot` in it holding a role of `bits` (none: no role). */
async function serverWith(bits: bigint | undefined): Promise<{ serverId: string; channelId: string; ownerId: string; bot: TestBot }> {
  const owner = await given.person(t);
  const server = await createServer(t.services, personActingOf(owner.id), { name: 'Workshop' });
  const bot = await given.bot(t, { name: 'Auditor' });
  await addMember(t.services, operatorActing(), server.id, bot.botUserId);
  if (bits !== undefined) {
    const role = await createRole(t.services, operatorActing(), server.id, { name: 'Bots', permissions: bits });
    await setMemberRoles(t.services, operatorActing(), server.id, bot.botUserId, [role.id]);
  }
  return { serverId: server.id, channelId: server.channels[0]?.id as string, ownerId: owner.id, bot };
}

function read(bot: TestBot, serverId: string, query = ''): Promise<LightMyRequestResponse> {
  return t.app.inject({ method: 'GET', url: `/api/v1/guilds/${serverId}/audit-logs${query}`, headers: bot.headers });
}

function emit(acting: Acting<Who>, event: DomainEvent): Promise<void> {
  return t.services.bus.emitted(t.services.db, acting, event);
}

const VIEW = Permission.VIEW_AUDIT_LOG | Permission.MANAGE_WEBHOOKS | Permission.VIEW_CHANNEL;

describe("reading a server's audit log with bot credentials (GET /api/v1/guilds/{guild_id}/audit-logs)", () => {
  it('a webhook the bot created, with its X-Audit-Log-Reason, is an entry of WEBHOOK_CREATE by the bot, with the bot in users and the webhook in webhooks', async () => {
    const { serverId, channelId, bot } = await serverWith(VIEW);
    const created = await t.app.inject({
      method: 'POST',
      url: `/api/v1/channels/${channelId}/webhooks`,
      headers: { ...bot.headers, 'content-type': 'application/json', 'x-audit-log-reason': encodeURIComponent('Deploy notices – ünïcode') },
      payload: JSON.stringify({ name: 'Deploys' }),
    });
    expect(created.statusCode).toBe(201);
    const webhookId = (created.json() as { id: string }).id;

    const res = await read(bot, serverId);
    expect(res.statusCode).toBe(200);
    const log = res.json() as AuditLog;
    const entry = log.audit_log_entries.find((e) => e.action_type === 50);
    expect(entry).toEqual({
      id: expect.stringMatching(/^\d+$/),
      user_id: bot.botUserId,
      target_id: webhookId,
      action_type: 50,
      changes: [
        { key: 'name', new_value: 'Deploys' },
        { key: 'channel_id', new_value: channelId },
      ],
      options: { channel_id: channelId },
      reason: 'Deploy notices – ünïcode',
    });
    expect(log.users.map((u) => u.id)).toContain(bot.botUserId);
    expect(log.webhooks.map((w) => [w.id, w.name])).toEqual([[webhookId, 'Deploys']]);
    expect(log.application_commands).toEqual([]);
    expect(log.guild_scheduled_events).toEqual([]);
    expect(log.threads).toEqual([]);
    expect(log.auto_moderation_rules).toEqual([]);
    // The address and request id are the operator's, never in the answer.
    expect(res.body).not.toContain('127.0.0.1');
    expect(res.body).not.toContain('request_id');
  });

  it('lists only this server’s entries that have a Discord action type, newest first', async () => {
    const { serverId, bot, ownerId } = await serverWith(VIEW);
    const other = await serverWith(VIEW);
    const owner = personActingOf(ownerId, t.clock.now());
    await emit(owner, { type: 'role.created', serverId, roleId: '9001', name: 'Moderators', permissions: '0', color: 0 });
    await emit(owner, { type: 'member.joined', serverId, userId: '9002' });
    await emit(owner, { type: 'channel.created', serverId, channelId: '9003', name: 'news' });
    await emit(owner, { type: 'role.created', serverId: other.serverId, roleId: '9004', name: 'Elsewhere', permissions: '0', color: 0 });

    const log = (await read(bot, serverId)).json() as AuditLog;
    const targets = log.audit_log_entries.map((e) => e.target_id);
    expect(targets.slice(0, 2)).toEqual(['9003', '9001']);
    expect(targets).not.toContain('9002'); // member.joined: no Discord action type
    expect(targets).not.toContain('9004'); // another server's
    const ids = log.audit_log_entries.map((e) => BigInt(e.id));
    expect([...ids].sort((a, b) => (a > b ? -1 : a < b ? 1 : 0))).toEqual(ids);
    expect(log.users.map((u) => u.id)).toContain(ownerId);
  });

  it('a role the owner creates through Server settings is a ROLE_CREATE entry by the owner, and user_id and action_type filter', async () => {
    const bot = await given.bot(t, { name: 'Reader' });
    const owner = await given.signedIn(t);
    const own = await createServer(t.services, personActingOf(owner.person.id), { name: 'Own' });
    await addMember(t.services, operatorActing(), own.id, bot.botUserId);
    const role = await createRole(t.services, operatorActing(), own.id, { name: 'Readers', permissions: Permission.VIEW_AUDIT_LOG });
    await setMemberRoles(t.services, operatorActing(), own.id, bot.botUserId, [role.id]);
    const posted = await owner.agent.submit(`/servers/${own.id}/settings/roles`, `/servers/${own.id}/roles`, { name: 'Moderators', color: '#3366ff', permissions: 'KICK_MEMBERS' });
    expect(posted.statusCode).toBe(303);

    const byOwner = (await read(bot, own.id, `?user_id=${owner.person.id}&action_type=30`)).json() as AuditLog;
    expect(byOwner.audit_log_entries).toHaveLength(1);
    expect(byOwner.audit_log_entries[0]).toMatchObject({ user_id: owner.person.id, action_type: 30, changes: expect.arrayContaining([{ key: 'name', new_value: 'Moderators' }]) });
    // The operator's role ("Readers") is a ROLE_CREATE too, without a user.
    const roles = (await read(bot, own.id, '?action_type=30')).json() as AuditLog;
    expect(roles.audit_log_entries.map((e) => e.user_id)).toEqual([owner.person.id, null]);
    expect((await read(bot, own.id, '?action_type=50')).json()).toMatchObject({ audit_log_entries: [] });
  });

  it('limit, before and after page through the log as Discord does', async () => {
    const { serverId, bot } = await serverWith(VIEW);
    const acting = actingOf({ kind: 'operator' } as const, t.clock.now());
    for (let i = 0; i < 7; i += 1) await emit(acting, { type: 'channel.created', serverId, channelId: String(8000 + i), name: `c${i}` });
    const all = ((await read(bot, serverId, '?action_type=10&limit=100')).json() as AuditLog).audit_log_entries.map((e) => e.target_id);
    expect(all).toEqual(['8006', '8005', '8004', '8003', '8002', '8001', '8000']);

    const first = ((await read(bot, serverId, '?action_type=10&limit=3')).json() as AuditLog).audit_log_entries;
    expect(first.map((e) => e.target_id)).toEqual(['8006', '8005', '8004']);
    const older = ((await read(bot, serverId, `?action_type=10&limit=3&before=${first[2]?.id}`)).json() as AuditLog).audit_log_entries;
    expect(older.map((e) => e.target_id)).toEqual(['8003', '8002', '8001']);
    // `after` reads the entries just after the cursor, listed newest first.
    const newer = ((await read(bot, serverId, `?action_type=10&limit=2&after=${older[2]?.id}`)).json() as AuditLog).audit_log_entries;
    expect(newer.map((e) => e.target_id)).toEqual(['8003', '8002']);
  });

  it('bad query parameters are 400 50035 naming the parameter, and nothing is read', async () => {
    const { serverId, bot } = await serverWith(VIEW);
    for (const [query, field] of [
      ['?limit=101', 'limit'],
      ['?limit=0', 'limit'],
      ['?limit=ten', 'limit'],
      ['?before=abc', 'before'],
      ['?after=12x', 'after'],
      ['?user_id=-1', 'user_id'],
      ['?user_id=99999999999999999999', 'user_id'],
      ['?before=9223372036854775808', 'before'],
      ['?action_type=1.5', 'action_type'],
      ['?action_type=role', 'action_type'],
    ] as const) {
      const res = await read(bot, serverId, query);
      expect(res.statusCode, query).toBe(400);
      const body = res.json() as { code: number; errors: Record<string, unknown> };
      expect(body.code, query).toBe(50035);
      expect(Object.keys(body.errors), query).toContain(field);
    }
    const unknown = await read(bot, serverId, '?user=1');
    expect(unknown.statusCode).toBe(400);
    expect((unknown.json() as { code: number }).code).toBe(50035);
  });

  it('a bot without View audit log gets 403 50013; a server it is not in, or none, 404 10004; no token 401', async () => {
    const without = await serverWith(Permission.MANAGE_WEBHOOKS);
    const refused = await read(without.bot, without.serverId);
    expect(refused.statusCode).toBe(403);
    expect((refused.json() as { code: number }).code).toBe(50013);

    const { bot } = await serverWith(VIEW);
    const elsewhere = await read(bot, without.serverId);
    expect(elsewhere.statusCode).toBe(404);
    expect((elsewhere.json() as { code: number }).code).toBe(10004);
    for (const id of ['123456789012345678', 'not-a-server']) {
      const res = await read(bot, id);
      expect(res.statusCode).toBe(404);
      expect((res.json() as { code: number }).code).toBe(10004);
    }
    const anonymous = await t.app.inject({ method: 'GET', url: `/api/v1/guilds/${without.serverId}/audit-logs` });
    expect(anonymous.statusCode).toBe(401);
  });

  it('an app added to the server is a BOT_ADD entry with the app in integrations', async () => {
    const { serverId, bot } = await serverWith(VIEW);
    const other = await given.bot(t, { name: 'Newcomer' });
    await emit(operatorActing(t.clock.now()), { type: 'bot.installed', serverId, applicationId: other.client.app.id, botUserId: other.botUserId, scopes: 'bot', permissions: '0' });
    const log = (await read(bot, serverId, '?action_type=28')).json() as AuditLog;
    expect(log.audit_log_entries).toEqual([expect.objectContaining({ action_type: 28, target_id: other.botUserId, user_id: null, options: { scopes: 'bot', permissions: '0' } })]);
    expect(log.integrations).toEqual([{ id: other.client.app.id, name: 'Newcomer', type: 'discord', account: { id: other.botUserId, name: 'Newcomer' }, application_id: other.client.app.id, application: { id: other.client.app.id, name: 'Newcomer', icon: null, description: expect.any(String) } }]);
    expect(log.users.map((u) => u.id)).toContain(other.botUserId);
  });
});
