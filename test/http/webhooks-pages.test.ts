import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Permission } from '../../src/core/permissions.js';
import { hashSecret } from '../../src/core/secrets.js';
import { createChannel } from '../../src/modules/directory/channels.service.js';
import { addMember } from '../../src/modules/directory/members.service.js';
import { createRole, updateRole } from '../../src/modules/directory/roles.service.js';
import { createServer, type CreatedServer } from '../../src/modules/directory/servers.service.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { csrfFrom, location, signedIn } from '../support/directory-fixtures.js';
import type { PageAgent } from '../support/page-agent.js';
import { stored } from '../support/stored.js';
import { operatorActing, personActingOf } from '../support/acting.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

/** A server whose @everyone may only view; the member holds a role with `bits`. */
async function serverWithMember(bits: bigint): Promise<{ server: CreatedServer; member: PageAgent; memberId: string; channelId: string }> {
  const owner = await signedIn(t);
  const server = await createServer(t.services, personActingOf(owner.person.id), { name: 'Newsroom' });
  await updateRole(t.services, operatorActing(), server.id, server.everyoneRoleId, { permissions: Permission.VIEW_CHANNEL | Permission.SEND_MESSAGES });
  const member = await signedIn(t, { name: 'Mia Member' });
  const role = await createRole(t.services, operatorActing(), server.id, { name: 'Given', permissions: bits });
  await addMember(t.services, operatorActing(), server.id, member.person.id, [role.id]);
  return { server, member: member.agent, memberId: member.person.id, channelId: server.channels[0]?.id as string };
}

const serverPage = (serverId: string) => `/servers/${serverId}/settings/integrations`;
const channelPage = (channelId: string) => `/channels/${channelId}/settings/integrations`;

function urlIn(body: string): string | undefined {
  return /value="(http:\/\/localhost:8080\/api\/v1\/webhooks\/\d+\/ghwt_[A-Za-z0-9_-]+)"/.exec(body)?.[1];
}

describe('Server settings → Integrations', () => {
  it('a person with Manage webhooks creates a webhook and sees its URL once, with a copy button; not on reload', async () => {
    const { server, member, memberId, channelId } = await serverWithMember(Permission.MANAGE_WEBHOOKS);
    const page = await member.get(serverPage(server.id));
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('Create a webhook');
    expect(page.body).toContain(`<option value="${channelId}"`);
    expect(page.body).toMatch(/href="\/servers\/\d+\/settings\/integrations" class="active"/);
    // The installed-apps section of the same page (issue #4), rendered by installs.page.ts.
    expect(page.body).toContain('id="installed-apps"');

    const res = await member.submitAndFollow(serverPage(server.id), `${serverPage(server.id)}/webhooks`, { name: 'Wire feed', avatarUrl: 'https://cdn.example.com/wire.png', channelId });
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const url = urlIn(res.body);
    expect(url).toMatch(/^http:\/\/localhost:8080\/api\/v1\/webhooks\/\d+\/ghwt_/);
    expect(res.body).toContain('data-copy="webhook-url"');
    expect(res.body).toMatch(/<script src="\/assets\/app\.[0-9a-f]+\.js"/);
    expect(res.body).toContain('shown only this once');

    const [webhook] = await stored.serverWebhooks(t, server.id);
    expect(webhook).toMatchObject({ name: 'Wire feed', avatarUrl: 'https://cdn.example.com/wire.png', channelId, creatorId: memberId, applicationId: null });
    const token = (url as string).split('/').pop() as string;
    expect(webhook?.tokenHash).toBe(hashSecret(token));

    const reload = await member.get(serverPage(server.id));
    expect(reload.body).toContain('Wire feed');
    expect(reload.body).toContain('Mia Member');
    expect(reload.body).toContain('# general');
    expect(reload.body).not.toContain(token);
    expect(urlIn(reload.body)).toBeUndefined();
  });

  it('regenerates after a confirmation step: a new URL shown once, the old one refused (401)', async () => {
    const { server, member, channelId } = await serverWithMember(Permission.MANAGE_WEBHOOKS);
    const created = await member.submitAndFollow(serverPage(server.id), `${serverPage(server.id)}/webhooks`, { name: 'Alerts', channelId });
    const oldUrl = urlIn(created.body) as string;
    const [webhook] = await stored.serverWebhooks(t, server.id);
    const confirm = `${serverPage(server.id)}/webhooks/${webhook?.id}/regenerate`;

    const confirmation = await member.get(confirm);
    expect(confirmation.statusCode).toBe(200);
    expect(confirmation.body).toContain('stops working immediately');
    expect(await stored.webhook(t, webhook?.id as string)).toMatchObject({ tokenHash: webhook?.tokenHash });

    const res = await member.submitAndFollow(confirm, confirm, {});
    expect(res.statusCode).toBe(200);
    const newUrl = urlIn(res.body) as string;
    expect(newUrl).toMatch(/^http:\/\/localhost:8080\/api\/v1\/webhooks\/\d+\/ghwt_/);
    expect(newUrl).not.toBe(oldUrl);
    expect(res.body).toContain('previous URL has stopped working');
    const path = (u: string) => u.replace('http://localhost:8080', '');
    const old = await t.app.inject({ method: 'GET', url: path(oldUrl) });
    expect(old.statusCode).toBe(401);
    expect(old.json()).toMatchObject({ code: 50027 });
    expect((await t.app.inject({ method: 'GET', url: path(newUrl) })).statusCode).toBe(200);
    expect(urlIn((await member.get(serverPage(server.id))).body)).toBeUndefined();
  });

  it('renames and changes the avatar; bad input re-renders 400 beside the form with nothing changed', async () => {
    const { server, member, channelId } = await serverWithMember(Permission.MANAGE_WEBHOOKS);
    await member.submit(serverPage(server.id), `${serverPage(server.id)}/webhooks`, { name: 'Before', channelId });
    const [webhook] = await stored.serverWebhooks(t, server.id);
    const action = `${serverPage(server.id)}/webhooks/${webhook?.id}`;

    const saved = await member.submit(serverPage(server.id), action, { name: 'After', avatarUrl: 'https://cdn.example.com/after.png' });
    expect(saved.statusCode).toBe(303);
    expect(location(saved)).toContain('done=webhook-saved');
    expect((await member.get(location(saved))).body).toContain('Webhook saved.');
    expect(await stored.webhook(t, webhook?.id as string)).toMatchObject({ name: 'After', avatarUrl: 'https://cdn.example.com/after.png' });

    for (const fields of [{ name: '', avatarUrl: '' }, { name: 'Gatehouse Support', avatarUrl: '' }, { name: 'Fine', avatarUrl: 'http://insecure.example.com/a.png' }]) {
      const bad = await member.submit(serverPage(server.id), action, fields);
      expect(bad.statusCode, JSON.stringify(fields)).toBe(400);
      expect(bad.body).toContain('role="alert"');
      expect(bad.body).toContain(`value="${fields.name}"`);
      expect(await stored.webhook(t, webhook?.id as string)).toMatchObject({ name: 'After', avatarUrl: 'https://cdn.example.com/after.png' });
    }

    const badCreate = await member.submit(serverPage(server.id), `${serverPage(server.id)}/webhooks`, { name: 'everyone', channelId });
    expect(badCreate.statusCode).toBe(400);
    expect(badCreate.body).toContain('reserved name');
    const wrongChannel = await member.submit(serverPage(server.id), `${serverPage(server.id)}/webhooks`, { name: 'Elsewhere', channelId: '123456789012345678' });
    expect(wrongChannel.statusCode).toBe(400);
    expect(await stored.serverWebhooks(t, server.id)).toHaveLength(1);
  });

  it('deletes after a confirmation step; the slot is freed', async () => {
    const { server, member, channelId } = await serverWithMember(Permission.MANAGE_WEBHOOKS);
    await member.submit(serverPage(server.id), `${serverPage(server.id)}/webhooks`, { name: 'Doomed', channelId });
    const [webhook] = await stored.serverWebhooks(t, server.id);
    const confirm = `${serverPage(server.id)}/webhooks/${webhook?.id}/delete`;
    const confirmation = await member.get(confirm);
    expect(confirmation.body).toContain('Delete Doomed?');
    expect(await stored.serverWebhooks(t, server.id)).toHaveLength(1);
    const res = await member.submit(confirm, confirm, {});
    expect(res.statusCode).toBe(303);
    expect((await member.get(location(res))).body).toContain('Webhook deleted.');
    expect(await stored.serverWebhooks(t, server.id)).toHaveLength(0);
    const channel = await t.services.db.selectFrom('channels').select('webhook_count').where('id', '=', channelId).executeTakeFirstOrThrow();
    expect(Number(channel.webhook_count)).toBe(0);
  });

  it('the 11th webhook of a channel is refused beside the form', async () => {
    const { server, member, channelId } = await serverWithMember(Permission.MANAGE_WEBHOOKS);
    for (let i = 0; i < 10; i += 1) expect((await member.submit(serverPage(server.id), `${serverPage(server.id)}/webhooks`, { name: `Hook ${i}`, channelId })).statusCode).toBe(303);
    const res = await member.submit(serverPage(server.id), `${serverPage(server.id)}/webhooks`, { name: 'Eleventh', channelId });
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain('Maximum number of webhooks reached (10)');
  });

  it('a member with Manage server but not Manage webhooks sees the page without webhook controls and gets 403 on every form', async () => {
    const { server, member, channelId } = await serverWithMember(Permission.MANAGE_SERVER);
    const page = await member.get(serverPage(server.id));
    expect(page.statusCode).toBe(200);
    expect(page.body).not.toContain('Create a webhook');
    expect(page.body).not.toContain('/webhooks"');
    expect(page.body).toContain('You need the Manage webhooks permission');
    const csrf = await csrfFrom(member, serverPage(server.id));
    const res = await member.postRaw(`${serverPage(server.id)}/webhooks`, { name: 'Sneaky', channelId, _csrf: csrf });
    expect(res.statusCode).toBe(403);
    expect(await stored.serverWebhooks(t, server.id)).toHaveLength(0);
  });

  it('a member without Manage webhooks or Manage server gets 403; a non-member 404; nothing changes', async () => {
    const { server, member, channelId } = await serverWithMember(Permission.MANAGE_WEBHOOKS);
    await member.submit(serverPage(server.id), `${serverPage(server.id)}/webhooks`, { name: 'Target', channelId });
    const [webhook] = await stored.serverWebhooks(t, server.id);
    const plain = await signedIn(t);
    await addMember(t.services, operatorActing(), server.id, plain.person.id);
    const stranger = await signedIn(t);
    expect((await plain.agent.get(serverPage(server.id))).statusCode).toBe(403);
    expect((await plain.agent.get(channelPage(channelId))).statusCode).toBe(403);
    expect((await stranger.agent.get(serverPage(server.id))).statusCode).toBe(404);
    for (const [agent, status] of [
      [plain.agent, 403],
      [stranger.agent, 404],
    ] as const) {
      const csrf = await csrfFrom(agent);
      const base = serverPage(server.id);
      for (const [action, fields] of [
        [`${base}/webhooks`, { name: 'Mine', channelId }],
        [`${base}/webhooks/${webhook?.id}`, { name: 'Renamed' }],
        [`${base}/webhooks/${webhook?.id}/regenerate`, {}],
        [`${base}/webhooks/${webhook?.id}/delete`, {}],
        [`${channelPage(channelId)}/webhooks`, { name: 'Mine' }],
      ] as const) {
        const res = await agent.postRaw(action, { ...fields, _csrf: csrf });
        expect(res.statusCode, action).toBe(status);
      }
    }
    expect(await stored.serverWebhooks(t, server.id)).toEqual([webhook]);
  });

  it('forms without a valid CSRF token are refused (403)', async () => {
    const { server, member, channelId } = await serverWithMember(Permission.MANAGE_WEBHOOKS);
    const res = await member.postRaw(`${serverPage(server.id)}/webhooks`, { name: 'No token', channelId });
    expect(res.statusCode).toBe(403);
    expect(await stored.serverWebhooks(t, server.id)).toHaveLength(0);
  });

  it('the server settings sidebar links to Integrations for people with Manage webhooks', async () => {
    const { server, member } = await serverWithMember(Permission.MANAGE_WEBHOOKS | Permission.MANAGE_CHANNELS);
    const settings = await member.get(`/servers/${server.id}/settings/channels`);
    expect(settings.body).toContain(`href="${serverPage(server.id)}"`);
  });
});

describe('Channel settings → Integrations', () => {
  it('lists only this channel’s webhooks and creates in this channel', async () => {
    const { server, member, channelId } = await serverWithMember(Permission.MANAGE_WEBHOOKS);
    const other = await createChannel(t.services, operatorActing(), server.id, { name: 'other' });
    await member.submit(channelPage(other.id), `${channelPage(other.id)}/webhooks`, { name: 'Other hook' });
    const res = await member.submitAndFollow(channelPage(channelId), `${channelPage(channelId)}/webhooks`, { name: 'Here hook', channelId: other.id });
    expect(res.statusCode).toBe(200);
    expect(urlIn(res.body)).toMatch(/^http:\/\/localhost:8080\/api\/v1\/webhooks\/\d+\/ghwt_/);
    const hooks = await stored.serverWebhooks(t, server.id);
    expect(hooks.map((h) => [h.name, h.channelId])).toEqual([
      ['Other hook', other.id],
      ['Here hook', channelId],
    ]);
    const page = await member.get(channelPage(channelId));
    expect(page.body).toContain('Here hook');
    expect(page.body).not.toContain('Other hook');

    // A webhook of another channel is not reachable through this channel's page.
    const otherHook = hooks[0];
    expect((await member.get(`${channelPage(channelId)}/webhooks/${otherHook?.id}/delete`)).statusCode).toBe(404);
    const csrf = await csrfFrom(member, channelPage(channelId));
    expect((await member.postRaw(`${channelPage(channelId)}/webhooks/${otherHook?.id}/delete`, { _csrf: csrf })).statusCode).toBe(404);
    expect(await stored.serverWebhooks(t, server.id)).toHaveLength(2);

    // Rename, regenerate and delete from the channel page come back to it.
    const here = hooks[1];
    const renamed = await member.submit(channelPage(channelId), `${channelPage(channelId)}/webhooks/${here?.id}`, { name: 'Renamed here', avatarUrl: '' });
    expect(location(renamed).startsWith(channelPage(channelId))).toBe(true);
    const regen = await member.submitAndFollow(channelPage(channelId), `${channelPage(channelId)}/webhooks/${here?.id}/regenerate`, {});
    expect(urlIn(regen.body)).toMatch(/^http:\/\/localhost:8080\/api\/v1\/webhooks\/\d+\/ghwt_/);
    const deleted = await member.submit(channelPage(channelId), `${channelPage(channelId)}/webhooks/${here?.id}/delete`, {});
    expect(location(deleted).startsWith(channelPage(channelId))).toBe(true);
    expect(await stored.serverWebhooks(t, server.id)).toHaveLength(1);
  });
});

describe('the channel view', () => {
  it('links to the channel’s Integrations for people with Manage webhooks only', async () => {
    const { server, member, channelId } = await serverWithMember(Permission.MANAGE_WEBHOOKS);
    expect((await member.get(`/channels/${channelId}`)).body).toContain(`href="${channelPage(channelId)}"`);
    const plain = await signedIn(t);
    await addMember(t.services, operatorActing(), server.id, plain.person.id);
    const view = await plain.agent.get(`/channels/${channelId}`);
    expect(view.statusCode).toBe(200);
    expect(view.body).not.toContain(channelPage(channelId));
  });
});
