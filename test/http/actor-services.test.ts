import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATOR, person, type Actor, type PersonActor } from '../../src/core/actor.js';
import type { Channel } from '../../src/modules/directory/channels.js';
import { addMember } from '../../src/modules/directory/members.service.js';
import { createServer } from '../../src/modules/directory/servers.service.js';
import { createApplication, deleteApplication, getManagedApplication, resetClientSecret, updateApplication } from '../../src/modules/applications/applications.service.js';
import type { Application } from '../../src/modules/applications/applications.js';
import { enableBot, resetBotToken } from '../../src/modules/applications/bots.service.js';
import { removeBot } from '../../src/modules/applications/installs.service.js';
import { removeUserInstall } from '../../src/modules/applications/user-installs.service.js';
import { createWebhook, deleteWebhookAs, regenerateWebhookTokenAs, updateWebhookAs } from '../../src/modules/webhooks/webhooks.service.js';
import type { Webhook } from '../../src/modules/webhooks/webhooks.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { createPerson } from '../support/oauth-factory.js';
import { actingOf, operatorActing, personActingOf } from '../support/acting.js';

/**
 * Issue #25 item 4: the services decide who may, whoever calls them — not only the routes. Each
 * case calls the service directly, with no page or API route in front of it.
 */
let t: TestApp;
let owner: PersonActor;
let stranger: Actor;
let member: Actor;
let serverId: string;
let channel: Channel;
let app: Application;
let webhook: Webhook;

beforeAll(async () => {
  t = await createTestApp();
  const [o, s, m] = [await createPerson(t), await createPerson(t), await createPerson(t)];
  [owner, stranger, member] = [person(o.id), person(s.id), person(m.id)];
  const server = await createServer(t.services, personActingOf(o.id), { name: 'Actors' });
  serverId = server.id;
  channel = server.channels[0] as Channel;
  // A member with only what @everyone holds: no Manage webhooks, no Manage server.
  await addMember(t.services, operatorActing(), serverId, m.id);
  ({ application: app } = await createApplication(t.services, actingOf(owner), { name: 'Owned App', redirectUris: ['https://owned.example/cb'], confidential: true }));
  ({ webhook } = await createWebhook(t.services, actingOf(owner), channel, { name: 'Owned Hook' }));
});
afterAll(async () => t.close());

describe('applications: only the owner or the operator manages an application', () => {
  it("another person's application is 404 10002 from every service, and nothing changes", async () => {
    await expect(getManagedApplication(t.services, stranger, app.id)).rejects.toMatchObject({ status: 404, code: 10002 });
    await expect(updateApplication(t.services, actingOf(stranger), app.id, { name: 'Taken Over' })).rejects.toMatchObject({ code: 10002 });
    await expect(resetClientSecret(t.services, actingOf(stranger), app.id)).rejects.toMatchObject({ code: 10002 });
    await expect(enableBot(t.services, actingOf(stranger), app.id)).rejects.toMatchObject({ code: 10002 });
    await expect(resetBotToken(t.services, actingOf(stranger), app.id)).rejects.toMatchObject({ code: 10002 });
    await expect(deleteApplication(t.services, actingOf(stranger), app.id)).rejects.toMatchObject({ code: 10002 });
    const stored = await getManagedApplication(t.services, owner, app.id);
    expect(stored.name).toBe('Owned App');
    expect(stored.botUserId).toBeNull();
    expect(stored.clientSecretHash).toBe(app.clientSecretHash);
  });

  it('a bot registers no application (403 50001); the operator registers one for the owner it names', async () => {
    await expect(createApplication(t.services, actingOf({ kind: 'bot', id: '1', applicationId: app.id }), { name: 'Bot App', redirectUris: [], confidential: true })).rejects.toMatchObject({ status: 403, code: 50001 });
    await expect(createApplication(t.services, actingOf(OPERATOR), { name: 'No Owner', redirectUris: [], confidential: true })).rejects.toMatchObject({ code: 50001 });
    const made = await createApplication(t.services, actingOf(OPERATOR), { ownerId: owner.id, name: 'By Operator', redirectUris: [], confidential: false });
    expect(made.application.ownerId).toBe(owner.id);
    expect((await updateApplication(t.services, actingOf(OPERATOR), made.application.id, { name: 'Renamed' })).name).toBe('Renamed');
  });
});

describe('webhooks: Manage webhooks is checked by the service itself', () => {
  it('a member without Manage webhooks gets 403 50013 creating, renaming, regenerating or deleting', async () => {
    await expect(createWebhook(t.services, actingOf(member), channel, { name: 'Mine' })).rejects.toMatchObject({ status: 403, code: 50013 });
    await expect(updateWebhookAs(t.services, actingOf(member), webhook.id, { name: 'Renamed' })).rejects.toMatchObject({ status: 403, code: 50013 });
    await expect(regenerateWebhookTokenAs(t.services, actingOf(member), webhook.id)).rejects.toMatchObject({ status: 403, code: 50013 });
    await expect(deleteWebhookAs(t.services, actingOf(member), webhook.id)).rejects.toMatchObject({ status: 403, code: 50013 });
  });

  it("a person outside the server gets 404: the channel (10003) or the webhook (10015) is not theirs to see", async () => {
    await expect(createWebhook(t.services, actingOf(stranger), channel, { name: 'Mine' })).rejects.toMatchObject({ status: 404, code: 10003 });
    await expect(updateWebhookAs(t.services, actingOf(stranger), webhook.id, { name: 'Renamed' })).rejects.toMatchObject({ status: 404, code: 10015 });
    await expect(deleteWebhookAs(t.services, actingOf(stranger), webhook.id)).rejects.toMatchObject({ status: 404, code: 10015 });
  });

  it('the owner may; the webhook was untouched by the refusals before', async () => {
    expect((await updateWebhookAs(t.services, actingOf(owner), webhook.id, { name: 'Still Mine' })).name).toBe('Still Mine');
    expect(webhook.name).toBe('Owned Hook');
  });
});

describe('installs: removing a bot and user installs', () => {
  it('removeBot refuses a member without Manage server (403 50013) and a non-member (404 10004)', async () => {
    await expect(removeBot(t.services, actingOf(member), serverId, app.id)).rejects.toMatchObject({ status: 403, code: 50013 });
    await expect(removeBot(t.services, actingOf(stranger), serverId, app.id)).rejects.toMatchObject({ status: 404, code: 10004 });
  });

  it('a user install is removed only by its person: the operator and bots have none (403 50001)', async () => {
    await expect(removeUserInstall(t.services, actingOf(OPERATOR), app.id)).rejects.toMatchObject({ status: 403, code: 50001 });
  });
});
