import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { given } from '../support/given.js';
import { PageAgent } from '../support/page-agent.js';

/**
 * Issue #24: the 404 page and the API reference show the signed-in header to a signed-in person
 * (they are answered outside the pages context, so they identify the viewer themselves).
 */

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

describe('pages outside the pages context know who is signed in', () => {
  it('the 404 page shows the signed-in header and its Sign out form to a signed-in person, and sign-in links to others', async () => {
    const { agent, person } = await given.signedIn(t, { name: 'Nora Notfound' });
    const mine = await agent.get('/no/such/page');
    expect(mine.statusCode).toBe(404);
    expect(mine.body).toContain(`Signed in as <strong>Nora Notfound</strong> (@${person.username})`);
    expect(mine.body).toMatch(/<form method="post" action="\/logout"><input type="hidden" name="_csrf" value="[^"]+">/);

    const anonymous = await new PageAgent(t.app).get('/no/such/page');
    expect(anonymous.statusCode).toBe(404);
    expect(anonymous.body).not.toContain('Signed in as');
    expect(anonymous.body).toContain('href="/login"');
  });

  it('the API reference shows the signed-in header to a signed-in person, and the shared signed-out page to others', async () => {
    const { agent } = await given.signedIn(t, { name: 'Rhea Reference' });
    const mine = await agent.get('/api/docs');
    expect(mine.statusCode).toBe(200);
    expect(mine.body).toContain('Signed in as <strong>Rhea Reference</strong>');

    const anonymous = await new PageAgent(t.app).get('/api/docs');
    expect(anonymous.statusCode).toBe(200);
    expect(anonymous.body).not.toContain('Signed in as');
    expect(anonymous.body).not.toContain('Rhea Reference');
  });

  it('an unknown session cookie leaves the 404 page signed out', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/no/such/page', headers: { cookie: 'gh_session=nope; __Host-gh_session=nope' } });
    expect(res.statusCode).toBe(404);
    expect(res.body).not.toContain('Signed in as');
  });
});
