import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { call, createTestWebhook, recordEvents } from './webhook-url.fixtures.js';
import { MESSAGE_NEUTRAL, userJson } from '../support/discord-resources.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

async function storedMessages(channelId: string) {
  return t.services.db.selectFrom('messages').selectAll().where('channel_id', '=', channelId).orderBy('id').execute();
}

describe('POST /api/v1/webhooks/{id}/{token} (execute)', () => {
  it('posts the message and answers 204 without a body when wait is absent', async () => {
    const w = await createTestWebhook(t, { name: 'CI', avatarUrl: 'https://img.example/ci.png' });
    const events = recordEvents(t, w.channel.id);
    const res = await call(t, 'POST', w.path, { content: 'Build #12 passed' });
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    const rows = await storedMessages(w.channel.id);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ content: 'Build #12 passed', author_name: 'CI', author_avatar_url: 'https://img.example/ci.png', embeds: '[]' });
    expect(String(rows[0]?.webhook_id)).toBe(w.webhook.id);
    expect(String(rows[0]?.author_id)).toBe(w.webhook.id);
    expect(events).toEqual([{ type: 'message_create', channelId: w.channel.id, messageId: String(rows[0]?.id) }]);
  });

  it('with wait=true answers 200 with the message record', async () => {
    const w = await createTestWebhook(t, { name: 'Deploys' });
    const res = await call(t, 'POST', `${w.path}?wait=true`, { content: 'Shipped', embeds: [{ title: 'v1.2', color: 0x2ecc71 }] });
    expect(res.statusCode).toBe(200);
    const message = res.json();
    expect(message).toEqual({
      id: expect.stringMatching(/^\d+$/),
      ...MESSAGE_NEUTRAL,
      channel_id: w.channel.id,
      content: 'Shipped',
      embeds: [{ type: 'rich', title: 'v1.2', color: 0x2ecc71 }],
      // A webhook author has no display name: Discord's global_name null.
      author: userJson({ id: w.webhook.id, username: 'Deploys', global_name: null, avatar_url: null, bot: true }),
      webhook_id: w.webhook.id,
      // application_id: absent for a webhook a person created (Discord omits it).
      mentions: [],
      mention_everyone: false,
      timestamp: new Date(t.clock.now()).toISOString(),
      edited_timestamp: null,
    });
    const rows = await storedMessages(w.channel.id);
    expect(rows.map((r) => String(r.id))).toEqual([message.id]);
  });

  it('reads wait as true/1/True and false/0/False; anything else is a 50035 at wait and posts nothing', async () => {
    const w = await createTestWebhook(t);
    for (const value of ['true', '1', 'True']) expect((await call(t, 'POST', `${w.path}?wait=${value}`, { content: value })).statusCode, value).toBe(200);
    for (const value of ['false', '0', 'False']) expect((await call(t, 'POST', `${w.path}?wait=${value}`, { content: value })).statusCode, value).toBe(204);
    t.clock.advance(2000);
    for (const value of ['yes', 'TRUE', '']) {
      const res = await call(t, 'POST', `${w.path}?wait=${value}`, { content: 'nope' });
      expect(res.statusCode, value).toBe(400);
      expect(res.json()).toMatchObject({ code: 50035, errors: { wait: { _errors: [{ code: 'BOOLEAN_TYPE_COERCE' }] } } });
    }
    expect(await storedMessages(w.channel.id)).toHaveLength(6);
  });

  it('always returns embeds as an array, and content as "" for an embed-only message', async () => {
    const w = await createTestWebhook(t);
    const res = await call(t, 'POST', `${w.path}?wait=true`, { embeds: [{ description: 'Only an embed' }] });
    expect(res.json()).toMatchObject({ content: '', embeds: [{ description: 'Only an embed' }] });
    const plain = await call(t, 'POST', `${w.path}?wait=true`, { content: 'no embeds' });
    expect(plain.json().embeds).toEqual([]);
  });

  it('keeps @everyone, @here and mention syntax as literal text that mentions nobody', async () => {
    const w = await createTestWebhook(t);
    const content = '@everyone @here <@123456789012345678> <@&42> <#7>';
    const res = await call(t, 'POST', `${w.path}?wait=true`, { content });
    expect(res.json()).toMatchObject({ content, mentions: [], mention_everyone: false, mention_roles: [] });
  });

  it('lets username and avatarUrl (or avatar_url) override the author for that message only', async () => {
    const w = await createTestWebhook(t, { name: 'CI', avatarUrl: 'https://img.example/ci.png' });
    const custom = await call(t, 'POST', `${w.path}?wait=true`, { content: 'a', username: ' Release train ', avatar_url: 'https://img.example/train.png' });
    expect(custom.json().author).toEqual(userJson({ id: w.webhook.id, username: 'Release train', global_name: null, avatar_url: 'https://img.example/train.png', bot: true }));
    const next = await call(t, 'POST', `${w.path}?wait=true`, { content: 'b' });
    expect(next.json().author).toEqual(userJson({ id: w.webhook.id, username: 'CI', global_name: null, avatar_url: 'https://img.example/ci.png', bot: true }));
  });

  it('refuses a username that passes for the service (SPEC §7) with 400 50035 at username, posting nothing', async () => {
    const w = await createTestWebhook(t);
    for (const username of ['Gatehouse', 'gatehouse alerts', 'G\u0430teh\u03bfuse', 'Gate\u200bhouse', 'G4T3H0US3', 'System', '@everyone']) {
      const res = await call(t, 'POST', w.path, { content: 'Your password expired', username });
      expect(res.statusCode, username).toBe(400);
      expect(res.json()).toMatchObject({ code: 50035, message: 'Invalid Form Body', errors: { username: { _errors: [{ code: 'USERNAME_INVALID' }] } } });
    }
    t.clock.advance(2000);
    expect((await call(t, 'POST', w.path, { content: 'ok', username: 'Where bot' })).statusCode).toBe(204);
    expect((await call(t, 'POST', w.path, { content: 'ok', username: 'Ecosystem feed' })).statusCode).toBe(204);
    const rows = await storedMessages(w.channel.id);
    expect(rows.map((r) => r.author_name)).toEqual(['Where bot', 'Ecosystem feed']);
  });

  it('refuses an avatarUrl that is not https', async () => {
    const w = await createTestWebhook(t);
    const res = await call(t, 'POST', w.path, { content: 'x', avatarUrl: 'http://img.example/a.png' });
    expect(res.statusCode).toBe(400);
    expect(res.json().errors.avatarUrl._errors[0].code).toBe('URL_TYPE_INVALID_SCHEME');
  });

  it('ignores keys Discord clients send that mean nothing here', async () => {
    const w = await createTestWebhook(t);
    const res = await call(t, 'POST', `${w.path}?wait=true`, { content: 'hi', tts: true, nonce: 'abc', allowed_mentions: { parse: [] }, flags: 4096, components: [], attachments: [] });
    expect(res.statusCode).toBe(200);
    expect(res.json().content).toBe('hi');
  });

  it('refuses an empty message with 400 50006', async () => {
    const w = await createTestWebhook(t);
    for (const body of [{}, { content: '' }, { content: '  ' }, { embeds: [] }, { username: 'Bob' }]) {
      const res = await call(t, 'POST', w.path, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json()).toEqual({ code: 50006, message: 'Cannot send an empty message' });
    }
    const noBody = await t.app.inject({ method: 'POST', url: w.path });
    expect(noBody.json()).toEqual({ code: 50006, message: 'Cannot send an empty message' });
    expect(await storedMessages(w.channel.id)).toHaveLength(0);
  });

  it('answers invalid JSON with 400 50109, still carrying the rate-limit headers', async () => {
    const w = await createTestWebhook(t);
    const res = await t.app.inject({ method: 'POST', url: w.path, headers: { 'content-type': 'application/json' }, payload: '{"content": ' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 50109 });
    expect(res.headers['x-ratelimit-limit']).toBe('10');
  });
});

describe('SPEC §8 limits through the API', () => {
  it('content: 2000 code points pass, 2001 are refused (emoji and combining characters at the boundary)', async () => {
    const w = await createTestWebhook(t);
    const ok = ['a'.repeat(2000), '😀'.repeat(2000), 'e\u0301'.repeat(1000), `${'a'.repeat(1998)}❤️`];
    for (const content of ok) {
      const res = await call(t, 'POST', `${w.path}?wait=true`, { content });
      expect(res.statusCode).toBe(200);
      expect(res.json().content).toBe(content);
    }
    const over = ['a'.repeat(2001), '😀'.repeat(2001), `${'e\u0301'.repeat(1000)}e`, `${'a'.repeat(1999)}❤️`];
    for (const content of over) {
      const res = await call(t, 'POST', w.path, { content });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ code: 50035, message: 'Invalid Form Body', errors: { content: { _errors: [{ code: 'BASE_TYPE_MAX_LENGTH', message: 'Must be 2000 or fewer in length.' }] } } });
    }
    expect(await storedMessages(w.channel.id)).toHaveLength(4);
  });

  it('embeds: 10 pass, 11 are refused', async () => {
    const w = await createTestWebhook(t);
    const embeds = (n: number) => Array.from({ length: n }, (_, i) => ({ title: `#${i}` }));
    const ten = await call(t, 'POST', `${w.path}?wait=true`, { embeds: embeds(10) });
    expect(ten.statusCode).toBe(200);
    expect(ten.json().embeds).toHaveLength(10);
    const eleven = await call(t, 'POST', w.path, { embeds: embeds(11) });
    expect(eleven.statusCode).toBe(400);
    expect(eleven.json().errors).toEqual({ embeds: { _errors: [{ code: 'BASE_TYPE_MAX_LENGTH', message: 'Must be 10 or fewer in length.' }] } });
  });

  it('each embed limit at and one past the boundary', async () => {
    const w = await createTestWebhook(t);
    const cases: Array<[number, (s: string) => Record<string, unknown>, string[]]> = [
      [256, (s) => ({ title: s }), ['title']],
      [4096, (s) => ({ description: s }), ['description']],
      [256, (s) => ({ fields: [{ name: s, value: 'v' }] }), ['fields', '0', 'name']],
      [1024, (s) => ({ fields: [{ name: 'n', value: s }] }), ['fields', '0', 'value']],
      [2048, (s) => ({ footer: { text: s } }), ['footer', 'text']],
      [256, (s) => ({ author: { name: s } }), ['author', 'name']],
    ];
    for (const [max, build, path] of cases) {
      t.clock.advance(2000);
      expect((await call(t, 'POST', w.path, { embeds: [build('x'.repeat(max))] })).statusCode, path.join('.')).toBe(204);
      const res = await call(t, 'POST', w.path, { embeds: [build('x'.repeat(max + 1))] });
      expect(res.statusCode, path.join('.')).toBe(400);
      let node = res.json().errors.embeds['0'];
      for (const key of path) node = node[key];
      expect(node._errors[0].code).toBe('BASE_TYPE_MAX_LENGTH');
    }
    t.clock.advance(2000);
    const fields = (n: number) => Array.from({ length: n }, () => ({ name: 'n', value: 'v', inline: true }));
    expect((await call(t, 'POST', w.path, { embeds: [{ fields: fields(25) }] })).statusCode).toBe(204);
    expect((await call(t, 'POST', w.path, { embeds: [{ fields: fields(26) }] })).json().errors.embeds['0'].fields._errors[0].code).toBe('BASE_TYPE_MAX_LENGTH');
  });

  it('6000 characters over all embeds pass, 6001 are refused', async () => {
    const w = await createTestWebhook(t);
    const base = [{ description: 'd'.repeat(4096) }, { description: 'd'.repeat(1904) }];
    expect((await call(t, 'POST', w.path, { embeds: base })).statusCode).toBe(204);
    const res = await call(t, 'POST', w.path, { embeds: [...base, { title: 'x' }] });
    expect(res.statusCode).toBe(400);
    expect(res.json().errors).toEqual({ embeds: { _errors: [{ code: 'MAX_EMBED_SIZE_EXCEEDED', message: 'Embed size exceeds maximum size of 6000' }] } });
  });

  it('embed URLs must be http(s)', async () => {
    const w = await createTestWebhook(t);
    const res = await call(t, 'POST', w.path, { embeds: [{ title: 'x', url: 'javascript:alert(1)', image: { url: 'file:///etc/passwd' } }] });
    expect(res.statusCode).toBe(400);
    expect(res.json().errors.embeds['0'].url._errors[0].code).toBe('URL_TYPE_INVALID_SCHEME');
    expect(res.json().errors.embeds['0'].image.url._errors[0].code).toBe('URL_TYPE_INVALID_SCHEME');
  });

  it('stores the full embed object normalised, and returns it so', async () => {
    const w = await createTestWebhook(t);
    const res = await call(t, 'POST', `${w.path}?wait=true`, {
      embeds: [
        {
          title: 'Deploy',
          description: 'All green',
          url: 'https://ci.example/1',
          timestamp: '2026-11-21T12:00:00+01:00',
          color: 3066993,
          footer: { text: 'CI', icon_url: 'https://img.example/f.png' },
          image: { url: 'https://img.example/i.png' },
          thumbnail: { url: 'https://img.example/t.png' },
          author: { name: 'Bot', url: 'https://ci.example', icon_url: 'https://img.example/a.png' },
          fields: [{ name: 'Env', value: 'prod', inline: true }, { name: 'Time', value: '3m' }],
          type: 'rich',
          provider: { name: 'x' },
        },
      ],
    });
    // Stored with message-payload.ts's names; answered with Discord's (type, icon_url, proxy_*).
    const stored = {
      title: 'Deploy',
      description: 'All green',
      url: 'https://ci.example/1',
      timestamp: '2026-11-21T11:00:00.000Z',
      color: 3066993,
      footer: { text: 'CI', iconUrl: 'https://img.example/f.png' },
      image: { url: 'https://img.example/i.png' },
      thumbnail: { url: 'https://img.example/t.png' },
      author: { name: 'Bot', url: 'https://ci.example', iconUrl: 'https://img.example/a.png' },
      fields: [
        { name: 'Env', value: 'prod', inline: true },
        { name: 'Time', value: '3m', inline: false },
      ],
    };
    const expected = {
      type: 'rich',
      title: 'Deploy',
      description: 'All green',
      url: 'https://ci.example/1',
      timestamp: '2026-11-21T11:00:00.000Z',
      color: 3066993,
      footer: { text: 'CI', icon_url: 'https://img.example/f.png', proxy_icon_url: 'https://img.example/f.png' },
      image: { url: 'https://img.example/i.png', proxy_url: 'https://img.example/i.png' },
      thumbnail: { url: 'https://img.example/t.png', proxy_url: 'https://img.example/t.png' },
      author: { name: 'Bot', url: 'https://ci.example', icon_url: 'https://img.example/a.png', proxy_icon_url: 'https://img.example/a.png' },
      fields: [
        { name: 'Env', value: 'prod', inline: true },
        { name: 'Time', value: '3m', inline: false },
      ],
    };
    expect(res.json().embeds).toEqual([expected]);
    const [row] = await storedMessages(w.channel.id);
    expect(JSON.parse(String(row?.embeds))).toEqual([stored]);
  });
});

describe('input no database can store', () => {
  it('answers NUL characters with a 400, never a 500', async () => {
    const w = await createTestWebhook(t);
    const res = await call(t, 'POST', w.path, { content: 'a\u0000b', embeds: [{ title: 't\u0000' }] });
    expect(res.statusCode).toBe(400);
    expect(res.json().errors.content._errors[0].code).toBe('BASE_TYPE_INVALID');
    // Issue #21 §5: one text rule for every field, embeds included (they were stored with the NUL before).
    const embedOnly = await call(t, 'POST', `${w.path}?wait=true`, { embeds: [{ title: 'nul\u0000inside' }] });
    expect(embedOnly.statusCode).toBe(400);
    expect(embedOnly.json().errors.embeds['0'].title._errors[0].code).toBe('BASE_TYPE_INVALID');
  });
});
