import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { csrfFrom, signedIn } from '../support/directory-fixtures.js';
import { multipartBody, pngHeader } from '../support/multipart.js';
import type { PageAgent } from '../support/page-agent.js';
import { createBot, openDm, userInstall, type TestBot } from './dms.fixtures.js';

/**
 * Issue #42 §2 in direct messages. A DM on Gatehouse is between a person and an app's bot (SPEC
 * §5.2: bots open them); bots receive no messages, so the person's composer there takes the app's
 * commands only (issue #40 §2) and offers no files, and a post with files is refused with nothing
 * stored (with files the text is never run as a command: docs/files.md). The bot's files in the
 * DM are shown as in a channel.
 */
let t: TestApp;
let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gatehouse-dm-files-'));
  t = await createTestApp({ env: { GATEHOUSE_FILE_STORE: 'fs', GATEHOUSE_FILES_DIR: dir } });
});
afterAll(async () => {
  await t.close();
  rmSync(dir, { recursive: true, force: true });
});

async function stored(): Promise<{ rows: number; blobs: number; messages: number }> {
  const rows = (await t.services.db.selectFrom('attachments').select('id').execute()).length;
  const messages = (await t.services.db.selectFrom('messages').select('id').execute()).length;
  const walk = (d: string): number => readdirSync(d).reduce((n, name) => n + (statSync(join(d, name)).isDirectory() ? walk(join(d, name)) : 1), 0);
  return { rows, messages, blobs: walk(dir) };
}

describe('files in a direct message with an app’s bot', () => {
  let person: { agent: PageAgent };
  let bot: TestBot;
  let dmId: string;
  beforeAll(async () => {
    const made = await signedIn(t, { name: 'Grace' });
    person = made;
    bot = await createBot(t, { name: 'Reporter' });
    await userInstall(t, bot, made.person);
    await t.app.inject({ method: 'PUT', url: `/api/v1/applications/${bot.client.app.id}/commands`, headers: bot.headers, payload: [{ name: 'report', description: 'Sends the report' }] });
    const opened = await openDm(t, bot, { recipient_id: made.person.id });
    expect(opened.statusCode, opened.body).toBe(200);
    dmId = (opened.json() as { id: string }).id;
  });

  it('the bot’s image in the DM is shown inline at its size with its alt text in the person’s conversation', async () => {
    const body = await multipartBody({ payload_json: JSON.stringify({ content: 'Weekly report', attachments: [{ id: 0, description: 'Errors per day' }] }) }, [
      { field: 'files[0]', filename: 'errors.png', type: 'image/png', data: pngHeader(600, 300, 200) },
    ]);
    const posted = await t.app.inject({ method: 'POST', url: `/api/v1/channels/${dmId}/messages`, headers: { ...bot.headers, ...body.headers }, payload: body.payload });
    expect(posted.statusCode, posted.body).toBe(200);
    const page = await person.agent.get(`/messages/${dmId}`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('Weekly report');
    expect(page.body).toMatch(/<img src="[^"]*\/attachments\/\d+\/\d+\/errors\.png\?[^"]*" alt="Errors per day" width="\d+" height="\d+"/);
  });

  it('the DM’s composer takes commands only and offers no files (no file input, no multipart form)', async () => {
    const page = await person.agent.get(`/messages/${dmId}`);
    expect(page.body).toContain('data-composer="commands"');
    expect(page.body).not.toContain('type="file"');
    expect(page.body).not.toContain('multipart/form-data');
  });

  it('a post with a file to the DM’s composer is refused with a 4xx and stores nothing', async () => {
    const token = await csrfFrom(person.agent, `/messages/${dmId}`);
    const before = await stored();
    const body = await multipartBody({ content: '/report' }, [{ field: 'files', filename: 'chart.png', type: 'image/png', data: pngHeader(10, 10) }]);
    const cookie = [...person.agent.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const refused = await t.app.inject({ method: 'POST', url: `/messages/${dmId}`, headers: { ...body.headers, cookie, 'x-csrf-token': token }, payload: body.payload });
    // The DM's post is a small form only (its pages context has no multipart parser): 415, the body unread.
    expect(refused.statusCode).toBe(415);
    expect(await stored()).toEqual(before);
  });
});
