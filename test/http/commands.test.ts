import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enableBot } from '../../src/modules/applications/bots.service.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { createClient, createPerson, type TestClient } from '../support/oauth-factory.js';
import { OPERATOR } from '../../src/core/actor.js';
import { actingOf } from '../support/acting.js';

let t: TestApp;
let client: TestClient;
let token: string;
let other: { client: TestClient; token: string };

function url(appId: string): string {
  return `/api/v1/applications/${appId}/commands`;
}

async function put(body: unknown, appId = client.app.id, auth = `Bot ${token}`) {
  // Each PUT in a bucket window of its own: bots may make 10 such writes per 10 s (docs/bots.md "Rate limits").
  t.clock.advance(10_000);
  return t.app.inject({ method: 'PUT', url: url(appId), headers: { authorization: auth, 'content-type': 'application/json' }, payload: JSON.stringify(body) });
}

async function get(appId = client.app.id, auth = `Bot ${token}`) {
  return t.app.inject({ method: 'GET', url: url(appId), headers: { authorization: auth } });
}

const cmd = (name: string, description = `Does ${name}`) => ({ name, description });

beforeAll(async () => {
  t = await createTestApp();
  const owner = await createPerson(t);
  client = await createClient(t, { owner, name: 'Command App' });
  token = (await enableBot(t.services, actingOf(OPERATOR), client.app.id)).token;
  const otherClient = await createClient(t, { owner, name: 'Other App' });
  other = { client: otherClient, token: (await enableBot(t.services, actingOf(OPERATOR), otherClient.app.id)).token };
});
afterAll(async () => t.close());

describe('PUT and GET /api/v1/applications/{id}/commands (issue #4 "Commands")', () => {
  it('an application starts with no commands', async () => {
    const res = await get();
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual([]);
  });

  it('PUT stores the list and answers it; GET then returns the same', async () => {
    const option = { name: 'who', description: 'Who to greet', type: 6, required: true };
    const res = await put([{ ...cmd('ping'), options: [option] }, cmd('deploy')]);
    expect(res.statusCode).toBe(200);
    const stored = res.json<{ id: string; application_id: string; name: string; description: string; options: unknown[]; type: number }[]>();
    expect(stored.map((c) => c.name)).toEqual(['deploy', 'ping']);
    expect(stored[1]).toEqual({
      id: expect.stringMatching(/^\d+$/),
      application_id: client.app.id,
      name: 'ping',
      description: 'Does ping',
      options: [option],
      type: 1,
      version: stored[1]?.id,
      default_member_permissions: null,
      dm_permission: true,
      integration_types: [0, 1],
      contexts: null,
      nsfw: false,
    });
    expect((await get()).json()).toEqual(stored);
  });

  it('issue #40 §2: default_member_permissions, integration_types and contexts are kept and answered as Discord does; dm_permission follows contexts', async () => {
    const res = await put([
      { ...cmd('ban'), default_member_permissions: '4', contexts: [0] },
      { ...cmd('note'), integration_types: [1], contexts: [1, 2] },
      { ...cmd('old'), dm_permission: false },
    ]);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject([
      { name: 'ban', default_member_permissions: '4', integration_types: [0, 1], contexts: [0], dm_permission: false },
      { name: 'note', default_member_permissions: null, integration_types: [1], contexts: [1, 2], dm_permission: true },
      { name: 'old', contexts: [0], dm_permission: false },
    ]);
    // Overwritten without them: back to the defaults.
    expect((await put([cmd('ban')])).json()).toMatchObject([{ name: 'ban', default_member_permissions: null, integration_types: [0, 1], contexts: null, dm_permission: true }]);
    const bad = await put([{ ...cmd('ban'), default_member_permissions: 'mods', contexts: [3] }]);
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ code: 50035, errors: { '0': { default_member_permissions: { _errors: [{ code: 'BASE_TYPE_BAD_TYPE' }] }, contexts: { '0': { _errors: [{ code: 'BASE_TYPE_CHOICES' }] } } } } });
  });

  it('is a bulk overwrite: names left out are deleted, kept names keep their id, new ones are added', async () => {
    const before = (await put([cmd('alpha'), cmd('beta')])).json<{ id: string; name: string }[]>();
    const after = (await put([cmd('beta', 'Changed'), cmd('gamma')])).json<{ id: string; name: string; description: string }[]>();
    expect(after.map((c) => c.name)).toEqual(['beta', 'gamma']);
    expect(after[0]?.id).toBe(before.find((c) => c.name === 'beta')?.id);
    expect(after[0]?.description).toBe('Changed');
    expect((await get()).json<{ name: string }[]>().map((c) => c.name)).toEqual(['beta', 'gamma']);
  });

  it('an empty list deletes every command', async () => {
    await put([cmd('one')]);
    expect((await put([])).json()).toEqual([]);
    expect((await get()).json()).toEqual([]);
  });

  it('accepts a 32-character name and refuses 33 with 50035 at the field, changing nothing', async () => {
    await put([cmd('kept')]);
    expect((await put([cmd('a'.repeat(32))])).statusCode).toBe(200);
    await put([cmd('kept')]);
    const res = await put([cmd('a'.repeat(33))]);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 50035, message: 'Invalid Form Body', errors: { '0': { name: { _errors: [{ code: 'BASE_TYPE_BAD_LENGTH' }] } } } });
    expect((await get()).json<{ name: string }[]>().map((c) => c.name)).toEqual(['kept']);
  });

  it('refuses upper-case names', async () => {
    const res = await put([cmd('Ping')]);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 50035, errors: { '0': { name: { _errors: [{ code: 'APPLICATION_COMMAND_INVALID_NAME' }] } } } });
  });

  it('accepts a 100-character description and refuses 101', async () => {
    expect((await put([cmd('d', 'x'.repeat(100))])).statusCode).toBe(200);
    const res = await put([cmd('d', 'x'.repeat(101))]);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 50035, errors: { '0': { description: { _errors: [{ code: 'BASE_TYPE_BAD_LENGTH' }] } } } });
  });

  it('accepts 100 commands and refuses 101', async () => {
    const list = (n: number) => Array.from({ length: n }, (_, i) => cmd(`c${String(i).padStart(3, '0')}`));
    const ok = await put(list(100));
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toHaveLength(100);
    const res = await put(list(101));
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 50035, errors: { _errors: [{ code: 'BASE_TYPE_MAX_LENGTH' }] } });
    expect((await get()).json()).toHaveLength(100);
  });

  it('refuses duplicate names, naming the second', async () => {
    const res = await put([cmd('same'), cmd('other'), cmd('same')]);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 50035, errors: { '2': { name: { _errors: [{ code: 'APPLICATION_COMMANDS_DUPLICATE_NAME' }] } } } });
  });

  it('refuses a lone object instead of a list, and bad options', async () => {
    const lone = await put(cmd('solo'));
    expect(lone.statusCode).toBe(400);
    expect(lone.json()).toMatchObject({ code: 50035, errors: { _errors: [{ code: 'BASE_TYPE_ARRAY' }] } });
    const badOptions = await put([{ ...cmd('opt'), options: [{ name: 'x' }] }]);
    expect(badOptions.statusCode).toBe(400);
    expect(badOptions.json()).toMatchObject({ code: 50035, errors: { '0': { options: { '0': { description: { _errors: [{ code: 'BASE_TYPE_REQUIRED' }] }, type: expect.anything() } } } } });
  });

  it("another application's bot gets 403 50001 Missing Access, for GET and PUT", async () => {
    const asOther = `Bot ${other.token}`;
    const g = await get(client.app.id, asOther);
    expect(g.statusCode).toBe(403);
    expect(g.json()).toEqual({ code: 50001, message: 'Missing Access' });
    const p = await put([cmd('hijack')], client.app.id, asOther);
    expect(p.statusCode).toBe(403);
    expect(p.json()).toMatchObject({ code: 50001 });
    expect((await get()).json<{ name: string }[]>().map((c) => c.name)).not.toContain('hijack');
  });

  it('an unknown or malformed application id is 404 10002', async () => {
    for (const id of ['1', '99999999999999999', 'abc']) {
      const res = await get(id);
      expect(res.statusCode, id).toBe(404);
      expect(res.json()).toMatchObject({ code: 10002, message: 'Unknown Application' });
    }
  });

  it('needs bot credentials: none or a wrong token is 401', async () => {
    expect((await t.app.inject({ method: 'GET', url: url(client.app.id) })).statusCode).toBe(401);
    expect((await put([], client.app.id, 'Bot ghbt_wrong')).statusCode).toBe(401);
  });
});

describe('one command at a time: POST, GET, PATCH and DELETE /api/v1/applications/{id}/commands[/{command_id}] (issue #40 §2, Discord’s routes)', () => {
  async function call(method: 'POST' | 'GET' | 'PATCH' | 'DELETE', path: string, body?: unknown, auth = `Bot ${token}`) {
    // Past the bots' write bucket (10 per 10 s; not under test here).
    t.clock.advance(10_000);
    return t.app.inject({ method, url: path, headers: { authorization: auth, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, ...(body === undefined ? {} : { payload: JSON.stringify(body) }) });
  }

  it('POST adds a command (201) and, for a name it has, overwrites it keeping its id (200)', async () => {
    await put([cmd('keep')]);
    const added = await call('POST', url(client.app.id), { ...cmd('report'), contexts: [0] });
    expect(added.statusCode).toBe(201);
    const id = (added.json() as { id: string }).id;
    expect(added.json()).toMatchObject({ name: 'report', contexts: [0], application_id: client.app.id });
    const again = await call('POST', url(client.app.id), cmd('report', 'Reports again'));
    expect(again.statusCode).toBe(200);
    expect(again.json()).toMatchObject({ id, description: 'Reports again', contexts: null });
    expect((await get()).json<{ name: string }[]>().map((c) => c.name)).toEqual(['keep', 'report']);
    const bad = await call('POST', url(client.app.id), { name: 'Bad Name', description: '' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ code: 50035, errors: { name: { _errors: [{ code: 'APPLICATION_COMMAND_INVALID_NAME' }] }, description: { _errors: [{ code: 'BASE_TYPE_BAD_LENGTH' }] } } });
    expect((await call('POST', url(client.app.id), [cmd('list')])).statusCode).toBe(400);
  });

  it('POST past 100 commands is Discord’s 400 30032 and adds nothing', async () => {
    await put(Array.from({ length: 100 }, (_, i) => cmd(`c${i}`)));
    const refused = await call('POST', url(client.app.id), cmd('one-more'));
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toMatchObject({ code: 30032 });
    expect((await get()).json<unknown[]>()).toHaveLength(100);
    // Overwriting one of the 100 is not adding.
    expect((await call('POST', url(client.app.id), cmd('c0', 'Still here'))).statusCode).toBe(200);
  });

  it('GET and PATCH one command: the fields sent replace its own, checked as a whole; a taken name is 50035; an unknown id 10063', async () => {
    const [first, second] = (await put([cmd('alpha'), cmd('beta')])).json<{ id: string }[]>();
    const one = `${url(client.app.id)}/${first?.id}`;
    expect((await call('GET', one)).json()).toMatchObject({ id: first?.id, name: 'alpha' });
    const renamed = await call('PATCH', one, { name: 'gamma', default_member_permissions: '32' });
    expect(renamed.statusCode).toBe(200);
    expect(renamed.json()).toMatchObject({ id: first?.id, name: 'gamma', description: 'Does alpha', default_member_permissions: '32' });
    expect((await call('PATCH', one, { dm_permission: false })).json()).toMatchObject({ contexts: [0], dm_permission: false, default_member_permissions: '32' });
    const taken = await call('PATCH', one, { name: 'beta' });
    expect(taken.statusCode).toBe(400);
    expect(taken.json()).toMatchObject({ code: 50035, errors: { name: { _errors: [{ code: 'APPLICATION_COMMANDS_DUPLICATE_NAME' }] } } });
    expect((await call('PATCH', one, { description: '' })).statusCode).toBe(400);
    expect((await get()).json<{ id: string; name: string }[]>().map((c) => c.name)).toEqual(['beta', 'gamma']);
    for (const missing of [`${url(client.app.id)}/1234567890123456789`, `${url(client.app.id)}/nope`]) {
      expect((await call('GET', missing)).json()).toMatchObject({ code: 10063 });
      expect((await call('PATCH', missing, { description: 'x' })).json()).toMatchObject({ code: 10063 });
    }
    expect((await call('GET', `${url(client.app.id)}/${second?.id}`, undefined, `Bot ${other.token}`)).statusCode).toBe(403);
  });

  it('DELETE one command: 204, then 10063; another app’s bot gets 403', async () => {
    const [only] = (await put([cmd('solo')])).json<{ id: string }[]>();
    const one = `${url(client.app.id)}/${only?.id}`;
    expect((await call('DELETE', one, undefined, `Bot ${other.token}`)).statusCode).toBe(403);
    expect((await call('DELETE', one)).statusCode).toBe(204);
    expect((await get()).json()).toEqual([]);
    expect((await call('DELETE', one)).json()).toMatchObject({ code: 10063 });
  });
});
