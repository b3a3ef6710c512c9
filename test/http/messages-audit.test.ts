import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Permission } from '../../src/core/permissions.js';
import { addMember } from '../../src/modules/directory/members.service.js';
import { createRole } from '../../src/modules/directory/roles.service.js';
import { createServer } from '../../src/modules/directory/servers.service.js';
import { deleteMessage } from '../../src/modules/messages/message-actions.service.js';
import { postMessage } from '../../src/modules/messages/messages.service.js';
import { setGithubSecret } from '../../src/modules/webhooks/compat-execute.service.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { operatorActing, personActingOf } from '../support/acting.js';
import { csrfFrom, signedIn } from '../support/directory-fixtures.js';
import { call, createTestWebhook, recordEvents } from './webhook-url.fixtures.js';

/**
 * Issue #37 §1, §2, §5: messages and the webhook URL's holder act with an acting context and emit
 * domain events. The audit log keeps a moderator deleting someone else's message (Discord's
 * MESSAGE_DELETE, 72) and what a webhook URL's holder does to the webhook itself (actor_kind
 * 'webhook'); an author deleting their own message, and anything refused, leave no row. Live
 * views hear message events only once their change has committed.
 */

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

async function room() {
  const owner = await signedIn(t, { name: 'Olive Owner' });
  const server = await createServer(t.services, personActingOf(owner.person.id), { name: 'Audited' });
  const member = await signedIn(t, { name: 'Mia Member' });
  await addMember(t.services, operatorActing(), server.id, member.person.id);
  const mods = await createRole(t.services, operatorActing(), server.id, { name: 'Moderators', permissions: Permission.MANAGE_MESSAGES });
  const moderator = await signedIn(t, { name: 'Max Moderator' });
  await addMember(t.services, operatorActing(), server.id, moderator.person.id, [mods.id]);
  return { server, general: server.channels[0]?.id as string, member, moderator };
}

/** Audit rows of `action`, with ids as strings and the action type as a number on either database. */
async function auditRows(action: string, where: { serverId?: string; targetId?: string }): Promise<Record<string, unknown>[]> {
  let query = t.services.db.selectFrom('audit_events').selectAll().where('action', '=', action);
  if (where.serverId !== undefined) query = query.where('server_id', '=', where.serverId);
  if (where.targetId !== undefined) query = query.where('target_id', '=', where.targetId);
  const rows = await query.execute();
  return rows.map((row) => {
    const plain: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(row)) plain[key] = typeof value === 'bigint' || typeof value === 'number' ? String(value) : value;
    plain['action_type'] = row.action_type === null ? null : Number(row.action_type);
    return plain;
  });
}

async function deleteThroughPage(agent: Awaited<ReturnType<typeof signedIn>>['agent'], channelId: string, messageId: string, requestId: string) {
  const csrf = await csrfFrom(agent);
  return agent.postRaw(`/channels/${channelId}/messages/${messageId}/delete`, { _csrf: csrf }, { 'x-request-id': requestId });
}

describe('deleting messages in the audit log (MESSAGE_DELETE)', () => {
  it('a moderator deleting someone else’s message through the page writes one row: 72, the moderator, the author, the server, the channel, the address and the request id', async () => {
    const { server, general, member, moderator } = await room();
    const m = await postMessage(t.services, personActingOf(member.person.id), general, 'against the rules');
    const res = await deleteThroughPage(moderator.agent, general, m.id, 'req-moderator-delete');
    expect(res.statusCode).toBe(303);
    const rows = await auditRows('message.deleted', { serverId: server.id });
    expect(rows).toHaveLength(1);
    const row = rows[0];
    expect(row).toMatchObject({
      action_type: 72,
      actor_kind: 'person',
      actor_id: moderator.person.id,
      target_id: member.person.id,
      server_id: server.id,
      request_id: 'req-moderator-delete',
      address: '127.0.0.1',
    });
    expect(JSON.parse(String(row?.options))).toMatchObject({ channel_id: general, message_id: m.id });
  });

  it('an author deleting their own message writes no row', async () => {
    const { server, general, member } = await room();
    const m = await postMessage(t.services, personActingOf(member.person.id), general, 'my own words');
    const res = await deleteThroughPage(member.agent, general, m.id, 'req-own-delete');
    expect(res.statusCode).toBe(303);
    expect(await t.services.db.selectFrom('messages').select('id').where('id', '=', m.id).executeTakeFirst()).toBeUndefined();
    expect(await auditRows('message.deleted', { serverId: server.id })).toHaveLength(0);
  });

  it('a member without Manage messages is refused (403) and nothing is written', async () => {
    const { server, general, member, moderator } = await room();
    const m = await postMessage(t.services, personActingOf(moderator.person.id), general, 'the moderator speaks');
    const res = await deleteThroughPage(member.agent, general, m.id, 'req-refused-delete');
    expect(res.statusCode).toBe(403);
    expect(await t.services.db.selectFrom('messages').select('id').where('id', '=', m.id).executeTakeFirst()).toBeDefined();
    expect(await auditRows('message.deleted', { serverId: server.id })).toHaveLength(0);
  });

  it('a delete whose audit row cannot be written rolls back: the message stays and no live view hears of it', async () => {
    const { general, member, moderator } = await room();
    const m = await postMessage(t.services, personActingOf(member.person.id), general, 'still here');
    const heard = recordEvents(t, general);
    const stop = t.services.bus.record(['message.deleted'], async () => {
      throw new Error('the audit log cannot be written');
    });
    try {
      await expect(deleteMessage(t.services, personActingOf(moderator.person.id), general, m.id)).rejects.toThrow('the audit log cannot be written');
    } finally {
      stop();
    }
    expect(await t.services.db.selectFrom('messages').select('id').where('id', '=', m.id).executeTakeFirst()).toBeDefined();
    expect(heard).toEqual([]);
    // The same delete, once it can be recorded, is heard (the recorder above was the only cause).
    await deleteMessage(t.services, personActingOf(moderator.person.id), general, m.id);
    expect(heard).toEqual([expect.objectContaining({ type: 'message_delete', messageId: m.id })]);
  });
});

describe('the webhook URL’s holder in the audit log', () => {
  it('renaming the webhook by its URL writes WEBHOOK_UPDATE (51) with actor_kind webhook, the old and new name, the address and the request id', async () => {
    const w = await createTestWebhook(t, { name: 'CI' });
    const res = await t.app.inject({ method: 'PATCH', url: w.path, remoteAddress: '203.0.113.7', headers: { 'x-request-id': 'req-holder-rename' }, payload: { name: 'Deploys' } });
    expect(res.statusCode).toBe(200);
    const rows = await auditRows('webhook.updated', { targetId: w.webhook.id });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ action_type: 51, actor_kind: 'webhook', actor_id: w.webhook.id, server_id: w.webhook.serverId, address: '203.0.113.7', request_id: 'req-holder-rename' });
    expect(JSON.parse(String(rows[0]?.changes))).toEqual([{ key: 'name', old_value: 'CI', new_value: 'Deploys' }]);
    expect(JSON.stringify(rows[0])).not.toContain(w.token);
  });

  it('a refused rename (400) writes no row', async () => {
    const w = await createTestWebhook(t, { name: 'CI' });
    const res = await call(t, 'PATCH', w.path, { name: '' });
    expect(res.statusCode).toBe(400);
    expect(await auditRows('webhook.updated', { targetId: w.webhook.id })).toHaveLength(0);
  });

  it('deleting the webhook by its URL writes WEBHOOK_DELETE (52) with actor_kind webhook', async () => {
    const w = await createTestWebhook(t, { name: 'Doomed' });
    const res = await t.app.inject({ method: 'DELETE', url: w.path, remoteAddress: '203.0.113.8', headers: { 'x-request-id': 'req-holder-delete' } });
    expect(res.statusCode).toBe(204);
    const rows = await auditRows('webhook.deleted', { targetId: w.webhook.id });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ action_type: 52, actor_kind: 'webhook', actor_id: w.webhook.id, address: '203.0.113.8', request_id: 'req-holder-delete' });
  });

  it('a webhook deleting its own message writes no row, and executing writes none', async () => {
    const w = await createTestWebhook(t);
    const posted = await call(t, 'POST', `${w.path}?wait=true`, { content: 'build passed' });
    expect(posted.statusCode).toBe(200);
    const messageId = (posted.json() as { id: string }).id;
    expect((await call(t, 'DELETE', `${w.path}/messages/${messageId}`)).statusCode).toBe(204);
    expect(await auditRows('message.deleted', { serverId: w.webhook.serverId })).toHaveLength(0);
    expect(await t.services.db.selectFrom('audit_events').select('action').where('actor_id', '=', w.webhook.id).execute()).toEqual([]);
  });

  it('setting a GitHub secret writes WEBHOOK_UPDATE with the key github_secret and never the secret', async () => {
    const w = await createTestWebhook(t);
    const secret = 'a very particular secret 42';
    await setGithubSecret(t.services, operatorActing(), w.webhook.id, secret);
    const rows = await auditRows('webhook.updated', { targetId: w.webhook.id });
    expect(rows).toHaveLength(1);
    expect(JSON.parse(String(rows[0]?.changes))).toEqual([{ key: 'github_secret' }]);
    expect(JSON.stringify(rows[0])).not.toContain(secret);
  });
});

describe('channel.read (not audited)', () => {
  it('the page reporting what it showed emits channel.read for the person, the channel and the message; a refused report emits nothing', async () => {
    const { general, member, moderator } = await room();
    const m = await postMessage(t.services, personActingOf(moderator.person.id), general, 'read me');
    const heard: unknown[] = [];
    const stop = t.services.bus.on(['channel.read'], (event, acting) => heard.push({ ...event, actor: acting.actor }));
    try {
      const outsider = await signedIn(t, { name: 'Otto Outsider' });
      expect((await outsider.agent.submit('/', `/channels/${general}/read`, { messageId: m.id })).statusCode).toBe(404);
      expect(heard).toEqual([]);
      expect((await member.agent.submit(`/channels/${general}`, `/channels/${general}/read`, { messageId: m.id })).statusCode).toBe(204);
    } finally {
      stop();
    }
    // Opening the channel (the submit's page) reads it too: the last report is the one posted above.
    expect(heard.at(-1)).toEqual({ type: 'channel.read', userId: member.person.id, channelId: general, messageId: m.id, actor: { kind: 'person', id: member.person.id } });
    expect(await auditRows('channel.read', {})).toEqual([]);
  });
});
