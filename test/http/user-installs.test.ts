import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installForUser, isUserInstalled } from '../../src/modules/applications/user-installs.service.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { csrfFrom, signedIn } from '../support/directory-fixtures.js';
import { createClient, createPerson } from '../support/oauth-factory.js';
import { PageAgent } from '../support/page-agent.js';
import { createBot, openDm, userInstall } from './dms.fixtures.js';
import { actingOf } from '../support/acting.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

describe('Settings → Installed apps', () => {
  it('lists the person’s user-installed apps with their initial and installed date, newest first', async () => {
    const { agent, person } = await signedIn(t);
    const first = await createBot(t, { name: 'alpha Notes' });
    await userInstall(t, first, person);
    t.clock.advance(2 * 86_400_000);
    const second = await createBot(t, { name: 'Zeta Tracker' });
    await userInstall(t, second, person);

    const page = await agent.get('/settings/apps');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<h1>Installed apps</h1>');
    expect(page.body).toMatch(/<a href="\/settings\/apps" class="active" aria-current="page">Installed apps<\/a>/);
    expect(page.body).toContain('<span class="avatar app-tile" aria-hidden="true">A</span>');
    expect(page.body).toContain('<span class="avatar app-tile" aria-hidden="true">Z</span>');
    const installedAt = new Date(t.clock.now()).toISOString().slice(0, 10);
    expect(page.body).toContain(`Installed <time datetime="${new Date(t.clock.now()).toISOString()}">${installedAt}</time>`);
    expect(page.body.indexOf('Zeta Tracker')).toBeLessThan(page.body.indexOf('alpha Notes'));
    expect(page.body).toContain(`href="/settings/apps/${first.client.app.id}/remove"`);
  });

  it('shows only the viewer’s own installs, and says so when there are none', async () => {
    const { agent } = await signedIn(t);
    const someoneElse = await createPerson(t);
    const bot = await createBot(t, { name: 'Private Helper' });
    await userInstall(t, bot, someoneElse);
    const page = await agent.get('/settings/apps');
    expect(page.body).toContain('You have not installed any apps.');
    expect(page.body).not.toContain('Private Helper');
  });

  it('every settings page links to it', async () => {
    const { agent } = await signedIn(t);
    expect((await agent.get('/settings/profile')).body).toContain('<a href="/settings/apps">Installed apps</a>');
  });

  it('Remove deletes the install, confirms it, and the bot can no longer open a DM', async () => {
    const { agent, person } = await signedIn(t);
    const bot = await createBot(t, { name: 'Ping' });
    await userInstall(t, bot, person);
    expect((await openDm(t, bot, { recipientId: person.id })).statusCode).toBe(200);

    const res = await agent.submit('/settings/apps', `/settings/apps/${bot.client.app.id}/remove`, {});
    expect(res.statusCode).toBe(303);
    expect(res.headers['location']).toBe('/settings/apps?removed=1');
    expect(await isUserInstalled(t.services, bot.client.app.id, person.id)).toBe(false);
    const page = await agent.get('/settings/apps?removed=1');
    expect(page.body).toContain('App removed.');
    expect(page.body).not.toContain('Ping');
    expect((await openDm(t, bot, { recipientId: person.id })).statusCode).toBe(403);

    // Submitting again finds nothing to remove and confirms nothing.
    const again = await agent.postRaw(`/settings/apps/${bot.client.app.id}/remove`, { _csrf: await csrfFrom(agent, '/settings/apps') });
    expect(again.statusCode).toBe(303);
    expect(again.headers['location']).toBe('/settings/apps');
  });

  it('Remove without a valid CSRF token is refused and removes nothing', async () => {
    const { agent, person } = await signedIn(t);
    const bot = await createBot(t);
    await userInstall(t, bot, person);
    for (const fields of [{}, { _csrf: 'forged' }] as Array<Record<string, string>>) {
      const res = await agent.postRaw(`/settings/apps/${bot.client.app.id}/remove`, fields);
      expect(res.statusCode).toBe(403);
    }
    expect(await isUserInstalled(t.services, bot.client.app.id, person.id)).toBe(true);
  });

  it('a person cannot remove someone else’s install: only their own row is touched', async () => {
    const { agent } = await signedIn(t);
    const owner = await createPerson(t);
    const bot = await createBot(t);
    await userInstall(t, bot, owner);
    const res = await agent.postRaw(`/settings/apps/${bot.client.app.id}/remove`, { _csrf: await csrfFrom(agent, '/settings/apps') });
    expect(res.headers['location']).toBe('/settings/apps');
    expect(await isUserInstalled(t.services, bot.client.app.id, owner.id)).toBe(true);
  });

  it('malformed and unknown app ids remove nothing and do not fail', async () => {
    const { agent } = await signedIn(t);
    const token = await csrfFrom(agent, '/settings/apps');
    for (const id of ['nope', '123456789012345678', '9'.repeat(40)]) {
      const res = await agent.postRaw(`/settings/apps/${id}/remove`, { _csrf: token });
      expect(res.statusCode, id).toBe(303);
    }
  });

  it('an app without a bot can be user-installed and listed; installing twice keeps one row and the first date', async () => {
    const { agent, person } = await signedIn(t);
    const owner = await createPerson(t);
    const client = await createClient(t, { owner, name: 'Botless' });
    expect(await installForUser(t.services, actingOf({ kind: 'person', id: person.id }), client.app.id)).toBe(true);
    const firstDate = t.clock.now();
    t.clock.advance(86_400_000 * 3);
    expect(await installForUser(t.services, actingOf({ kind: 'person', id: person.id }), client.app.id)).toBe(false);
    const page = await agent.get('/settings/apps');
    expect(page.body).toContain('Botless');
    expect(page.body).toContain(new Date(firstDate).toISOString());
    expect(page.body).toContain('It has no bot yet');
  });

  it('signed out, the page sends you to sign in', async () => {
    const res = await new PageAgent(t.app).get('/settings/apps');
    expect(res.statusCode).toBe(303);
    expect(res.headers['location']).toBe('/login?next=%2Fsettings%2Fapps');
  });
});
