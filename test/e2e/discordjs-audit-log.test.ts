import { API, AuditLogEvent } from '@discordjs/core/http-only';
import { DiscordAPIError, REST } from '@discordjs/rest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Permission } from '../../src/core/permissions.js';
import type { Channel } from '../../src/modules/directory/channels.js';
import { addMember } from '../../src/modules/directory/members.service.js';
import { createRole } from '../../src/modules/directory/roles.service.js';
import { createServer } from '../../src/modules/directory/servers.service.js';
import { createBot, type TestBot } from '../http/dms.fixtures.js';
import { operatorActing, personActingOf } from '../support/acting.js';
import { serveTestApp, type ServedApp } from '../support/browser.js';
import { createPerson } from '../support/oauth-factory.js';

/**
 * Issue #37 §5 and DESIGN §1: unmodified @discordjs/core reads a server's audit log
 * (guilds.getAuditLogs, with limit, action_type and user_id) from a listening Gatehouse, and the
 * `{ reason }` option it sends as X-Audit-Log-Reason on an audited call comes back as the entry's
 * reason. Assertions are on the fields discord-api-types declares.
 */

let served: ServedApp;
let auditor: TestBot;
let outsider: TestBot;
let channel: Channel;
let serverId: string;

const rest = (token: string) => new API(new REST({ api: `${served.baseUrl}/api`, version: '1', timeout: 15_000 }).setToken(token));

beforeAll(async () => {
  served = await serveTestApp();
  const owner = await createPerson(served.t, { username: 'audra', name: 'Audra' });
  auditor = await createBot(served.t, { name: 'Audit Bot', owner });
  outsider = await createBot(served.t, { name: 'Other Bot', owner });
  const server = await createServer(served.t.services, personActingOf(owner.id), { name: 'Audited Guild' });
  serverId = server.id;
  channel = server.channels[0] as Channel;
  const role = await createRole(served.t.services, operatorActing(), server.id, { name: 'Auditors', permissions: Permission.VIEW_AUDIT_LOG | Permission.MANAGE_WEBHOOKS | Permission.VIEW_CHANNEL });
  await addMember(served.t.services, operatorActing(), server.id, auditor.botUserId, [role.id]);
  await addMember(served.t.services, operatorActing(), server.id, outsider.botUserId);
});
afterAll(async () => served.close());

describe('@discordjs/core guilds.getAuditLogs (unmodified)', () => {
  it('a webhook created with { reason } is a WEBHOOK_CREATE entry by the bot with that reason; limit, action_type and user_id filter', async () => {
    const api = rest(auditor.token);
    const reason = 'Release notes for #general – ✓';
    const webhook = await api.channels.createWebhook(channel.id, { name: 'Release notes' }, { reason });

    const log = await api.guilds.getAuditLogs(serverId, { limit: 10, action_type: AuditLogEvent.WebhookCreate, user_id: auditor.botUserId });
    expect(log.audit_log_entries).toHaveLength(1);
    const entry = log.audit_log_entries[0];
    expect(entry?.action_type).toBe(AuditLogEvent.WebhookCreate);
    expect(entry?.user_id).toBe(auditor.botUserId);
    expect(entry?.target_id).toBe(webhook.id);
    expect(entry?.reason).toBe(reason);
    expect(entry?.changes).toContainEqual({ key: 'name', new_value: 'Release notes' });
    expect(entry?.options?.channel_id).toBe(channel.id);
    expect(log.users.map((u) => u.id)).toContain(auditor.botUserId);
    expect(log.users.find((u) => u.id === auditor.botUserId)?.bot).toBe(true);
    expect(log.webhooks.map((w) => w.id)).toEqual([webhook.id]);
    expect(log.integrations).toEqual([]);
    expect(log.application_commands).toEqual([]);
    expect(log.guild_scheduled_events).toEqual([]);
    expect(log.threads).toEqual([]);
    expect(log.auto_moderation_rules).toEqual([]);

    // The owner's role (ROLE_CREATE, by the operator here) is in the log, not in a WEBHOOK_CREATE filter.
    const roles = await api.guilds.getAuditLogs(serverId, { action_type: AuditLogEvent.RoleCreate });
    expect(roles.audit_log_entries.map((e) => e.action_type)).toEqual([AuditLogEvent.RoleCreate]);
    expect(roles.audit_log_entries[0]?.user_id).toBeNull();
    const nobody = await api.guilds.getAuditLogs(serverId, { user_id: outsider.botUserId });
    expect(nobody.audit_log_entries).toEqual([]);
  });

  it('a bot without View audit log gets DiscordAPIError 50013; a limit over 100 is 50035', async () => {
    const refused = await rest(outsider.token).guilds.getAuditLogs(serverId).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(DiscordAPIError);
    expect((refused as DiscordAPIError).code).toBe(50013);
    expect((refused as DiscordAPIError).status).toBe(403);
    const tooMany = await rest(auditor.token).guilds.getAuditLogs(serverId, { limit: 101 }).catch((error: unknown) => error);
    expect(tooMany).toBeInstanceOf(DiscordAPIError);
    expect((tooMany as DiscordAPIError).code).toBe(50035);
  });
});
