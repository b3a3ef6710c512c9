import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { API } from '@discordjs/core';
import { DiscordAPIError, REST } from '@discordjs/rest';
import { InteractionResponseType, InteractionType } from 'discord-interactions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_EVERYONE_PERMISSIONS, Permission } from '../../src/core/permissions.js';
import type { Channel } from '../../src/modules/directory/channels.js';
import { addMember } from '../../src/modules/directory/members.service.js';
import { updateRole } from '../../src/modules/directory/roles.service.js';
import type { Person } from '../../src/modules/directory/people.js';
import { operatorActing } from '../support/acting.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { testDialect } from '../support/database.js';
import { given, type TestBot } from '../support/given.js';
import { multipartBody, pngHeader } from '../support/multipart.js';
import type { PageAgent } from '../support/page-agent.js';
import { installWithCommands, serveInteractions } from './interactions.fixtures.js';
import { openDm, userInstall } from './dms.fixtures.js';

/**
 * Issue #40 §2 with issue #42 §2: an app's follow-ups and edits of its answer carry files as
 * webhook execute does (multipart/form-data with files[n], payload_json and attachments), sent by
 * @discordjs/core's interactions API unmodified with the interaction token alone. Refusals store
 * nothing. The files store is the filesystem (attachments.test.ts covers the database store).
 */

interface Received {
  id: string;
  application_id: string;
  token: string;
}

const LIMIT = 64 * 1024;
if (testDialect === 'postgres') console.log('interaction-files: files on the filesystem store; the database store is covered by attachments.test.ts');

describe('files on interaction follow-ups and edits (GATEHOUSE_OUTBOUND_ALLOW_PRIVATE for the loopback app)', () => {
  let t: TestApp;
  let dir: string;
  let api: API;
  let owner: { agent: PageAgent; person: Person };
  let bot: TestBot;
  let server: { id: string; everyoneRoleId: string };
  let channel: Channel;
  let appServer: Server;
  const received: Received[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-interaction-files-'));
    t = await createTestApp({ env: { GATEHOUSE_OUTBOUND_ALLOW_PRIVATE: 'true', GATEHOUSE_FILE_STORE: 'fs', GATEHOUSE_FILES_DIR: dir, GATEHOUSE_ATTACHMENT_MAX_BYTES: String(LIMIT) } });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    // @discordjs/core as an app uses it: no bot token, the interaction token authorizes; no retries, so a refusal is seen once.
    api = new API(new REST({ api: `${baseUrl}/api`, version: '1', timeout: 15_000, retries: 0 }));
    owner = await given.signedIn(t, { username: 'reporter' });
    bot = await given.bot(t, { owner: owner.person, name: 'Charts' });
    const made = await given.server(t, { owner: owner.person });
    server = made;
    channel = made.channels[0] as Channel;
    await installWithCommands(t, { bot, appName: 'Charts', installerId: owner.person.id, serverId: made.id, commands: [{ name: 'chart', description: 'Draws a chart later' }] });
    appServer = await serveInteractions(t, bot, (req, res) => {
      const body = req.body as Received & { type: number };
      if (body.type !== InteractionType.APPLICATION_COMMAND) return void res.status(400).end();
      received.push(body);
      return void res.json({ type: InteractionResponseType.DEFERRED_CHANNEL_MESSAGE_WITH_SOURCE });
    });
  });
  afterAll(async () => {
    if (appServer) await new Promise<void>((resolve) => appServer.close(() => resolve()));
    await t?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const channelPath = () => `/channels/${channel.id}`;
  /** The person uses /chart; the app defers (type 5) and gets the interaction. */
  async function invoke(): Promise<Received> {
    // Past the invocation and follow-up buckets of earlier tests (SPEC §8 limits are not under test here).
    t.clock.advance(10_000);
    const before = received.length;
    const posted = await owner.agent.submit(channelPath(), `${channelPath()}/messages`, { content: '/chart' });
    expect(posted.statusCode, posted.body.match(/role="alert">([^<]*)/)?.[1]).toBe(303);
    expect(received.length).toBe(before + 1);
    return received[received.length - 1] as Received;
  }
  /** Every stored file: attachment rows, and files in the store's directory. */
  async function stored(): Promise<{ rows: number; blobs: number }> {
    const rows = (await t.services.db.selectFrom('attachments').select('id').execute()).length;
    const walk = (d: string): number => readdirSync(d).reduce((n, name) => n + (statSync(join(d, name)).isDirectory() ? walk(join(d, name)) : 1), 0);
    return { rows, blobs: walk(dir) };
  }
  async function fetchFile(url: string) {
    const u = new URL(url);
    return t.app.inject({ method: 'GET', url: `${u.pathname}${u.search}` });
  }
  async function refusedBy(call: Promise<unknown>): Promise<DiscordAPIError> {
    const error = await call.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(DiscordAPIError);
    return error as DiscordAPIError;
  }

  it('editReply with files fills the deferred answer: Discord attachment objects, alt text, attachment:// in an embed, the image inline on the channel page', async () => {
    const interaction = await invoke();
    const png = pngHeader(800, 400, 1000);
    const edited = await api.interactions.editReply(interaction.application_id, interaction.token, {
      content: 'Build times this week',
      embeds: [{ title: 'Chart', image: { url: 'attachment://chart.png' } }],
      attachments: [{ id: 0, description: 'Build times per day' }],
      files: [{ name: 'chart.png', data: png, contentType: 'image/png' }],
    });
    expect(edited).toMatchObject({
      type: 20,
      flags: 0,
      content: 'Build times this week',
      interaction_metadata: { id: interaction.id, name: 'chart' },
      attachments: [{ filename: 'chart.png', size: png.length, content_type: 'image/png', width: 800, height: 400, description: 'Build times per day' }],
    });
    const [file] = edited.attachments;
    expect(file?.url).toMatch(new RegExp(`/attachments/${channel.id}/${file?.id}/chart\\.png\\?ex=`));
    expect(edited.embeds[0]?.image?.url).toBe(file?.url);
    const served = await fetchFile(file?.url ?? '');
    expect(served.statusCode).toBe(200);
    expect(served.rawPayload.equals(png)).toBe(true);
    // GET @original carries the files too, with fresh URLs.
    const fetched = await api.interactions.getOriginalReply(interaction.application_id, interaction.token);
    expect(fetched.attachments.map((a) => a.id)).toEqual([file?.id]);
    const page = await owner.agent.get(channelPath());
    expect(page.body).toContain('alt="Build times per day"');
    expect(page.body).not.toContain('Charts is thinking…');
  });

  it('followUp with files posts a message carrying them (a file alone needs no text), as webhook execute with files', async () => {
    const interaction = await invoke();
    await api.interactions.editReply(interaction.application_id, interaction.token, { content: 'Done' });
    const followUp = await api.interactions.followUp(interaction.application_id, interaction.token, {
      files: [
        { name: 'report.pdf', data: Buffer.from('%PDF-1.4 report'), contentType: 'application/pdf' },
        { name: 'log.txt', data: 'line 1\nline 2\n', contentType: 'text/plain' },
      ],
    });
    expect(followUp).toMatchObject({ type: 20, content: '', author: { id: bot.botUserId }, interaction_metadata: { id: interaction.id } });
    expect(followUp.attachments.map((a) => a.filename)).toEqual(['report.pdf', 'log.txt']);
    const pdf = await fetchFile(followUp.attachments[0]?.url ?? '');
    expect(pdf.statusCode).toBe(200);
    expect(pdf.body).toBe('%PDF-1.4 report');
    expect(pdf.headers['content-disposition']).toMatch(/^attachment/);
  });

  it('an edit listing no attachments removes the files of the follow-up; one listing the kept file keeps it and adds the new one', async () => {
    const interaction = await invoke();
    const followUp = await api.interactions.followUp(interaction.application_id, interaction.token, {
      content: 'Two charts',
      files: [
        { name: 'a.png', data: pngHeader(10, 10), contentType: 'image/png' },
        { name: 'b.png', data: pngHeader(20, 20), contentType: 'image/png' },
      ],
    });
    const [a] = followUp.attachments;
    const before = await stored();
    const kept = await api.interactions.editReply(
      interaction.application_id,
      interaction.token,
      { attachments: [{ id: a?.id as string }, { id: 0 }], files: [{ name: 'c.png', data: pngHeader(30, 30), contentType: 'image/png' }] },
      followUp.id,
    );
    expect(kept.attachments.map((x) => x.filename)).toEqual(['a.png', 'c.png']);
    expect(kept.content).toBe('Two charts');
    expect(await stored()).toEqual(before);
    const cleared = await api.interactions.editReply(interaction.application_id, interaction.token, { attachments: [] }, followUp.id);
    expect(cleared.attachments).toEqual([]);
    expect(await stored()).toEqual({ rows: before.rows - 2, blobs: before.blobs - 2 });
  });

  it('refusals store nothing: over the limit 413 (40005), attachment:// naming no file 400 (50035), text over 2000 400', async () => {
    const interaction = await invoke();
    const before = await stored();
    const big = await refusedBy(api.interactions.followUp(interaction.application_id, interaction.token, { content: 'too big', files: [{ name: 'big.bin', data: Buffer.alloc(LIMIT + 1, 1) }] }));
    expect(big.status).toBe(413);
    expect(big.code).toBe(40005);
    const dangling = await refusedBy(
      api.interactions.followUp(interaction.application_id, interaction.token, { embeds: [{ image: { url: 'attachment://missing.png' } }], files: [{ name: 'here.png', data: pngHeader(5, 5), contentType: 'image/png' }] }),
    );
    expect(dangling.status).toBe(400);
    expect(dangling.code).toBe(50035);
    const long = await refusedBy(api.interactions.editReply(interaction.application_id, interaction.token, { content: 'y'.repeat(2001), files: [{ name: 'y.txt', data: 'y' }] }));
    expect(long.status).toBe(400);
    expect(await stored()).toEqual(before);
    const page = await owner.agent.get(channelPath());
    expect(page.body).not.toContain('too big');
  });

  it('an ephemeral follow-up (flag 64) with a file: Discord\'s message with flags 64 and the attachment, on the invoker\'s page alone; deleting it removes the file', async () => {
    const interaction = await invoke();
    const before = await stored();
    const whisper = await api.interactions.followUp(interaction.application_id, interaction.token, { content: 'Your private report', flags: 64, files: [{ name: 'private.txt', data: 'for your eyes' }] });
    expect(whisper).toMatchObject({ type: 20, flags: 64, content: 'Your private report', attachments: [{ filename: 'private.txt', size: 13 }] });
    expect(await stored()).toEqual({ rows: before.rows + 1, blobs: before.blobs + 1 });
    const file = await fetchFile((whisper.attachments[0] as { url: string }).url);
    expect(file.body).toBe('for your eyes');
    const page = await owner.agent.get(channelPath());
    expect(page.body).toMatch(/<li class="message ephemeral"[\s\S]*?Your private report[\s\S]*?private\.txt[\s\S]*?Only you can see this/);
    const other = await given.signedIn(t, { username: 'bystander' });
    await addMember(t.services, operatorActing(), server.id, other.person.id);
    expect((await other.agent.get(channelPath())).body).not.toContain('Your private report');
    await api.interactions.deleteReply(interaction.application_id, interaction.token, whisper.id);
    expect(await stored()).toEqual(before);
    expect((await owner.agent.get(channelPath())).body).not.toContain('Your private report');
  });

  it('a payload_json that is not JSON is 400 (50109) and a body cut short is 400, nothing stored', async () => {
    const interaction = await invoke();
    const before = await stored();
    const url = `/api/v1/webhooks/${interaction.application_id}/${interaction.token}`;
    const bad = await multipartBody({ payload_json: '{not json' }, [{ field: 'files[0]', filename: 'a.txt', data: 'a' }]);
    const badJson = await t.app.inject({ method: 'POST', url, ...bad });
    expect(badJson.statusCode).toBe(400);
    const whole = await multipartBody({ payload_json: JSON.stringify({ content: 'cut' }) }, [{ field: 'files[0]', filename: 'a.txt', data: 'a'.repeat(4000) }]);
    const cut = await t.app.inject({ method: 'POST', url, headers: whole.headers, payload: whole.payload.subarray(0, whole.payload.length - 2000) });
    expect(cut.statusCode).toBe(400);
    expect(await stored()).toEqual(before);
  });

  it('without Attach files in the channel, the app’s bot may answer with text but not files: 403 (50013), nothing stored', async () => {
    const interaction = await invoke();
    await updateRole(t.services, operatorActing(), server.id, server.everyoneRoleId, { permissions: DEFAULT_EVERYONE_PERMISSIONS & ~Permission.ATTACH_FILES });
    try {
      const before = await stored();
      const refused = await refusedBy(api.interactions.followUp(interaction.application_id, interaction.token, { content: 'with a chart', files: [{ name: 'c.png', data: pngHeader(5, 5), contentType: 'image/png' }] }));
      expect(refused.status).toBe(403);
      expect(refused.code).toBe(50013);
      expect(await stored()).toEqual(before);
      const text = await api.interactions.followUp(interaction.application_id, interaction.token, { content: 'text only' });
      expect(text).toMatchObject({ content: 'text only', attachments: [] });
    } finally {
      await updateRole(t.services, operatorActing(), server.id, server.everyoneRoleId, { permissions: DEFAULT_EVERYONE_PERMISSIONS });
    }
  });
  it('in a DM with the app’s bot (the person’s user install), a follow-up takes files with no Attach files, as on Discord', async () => {
    await updateRole(t.services, operatorActing(), server.id, server.everyoneRoleId, { permissions: DEFAULT_EVERYONE_PERMISSIONS & ~Permission.ATTACH_FILES });
    try {
      await userInstall(t, bot, owner.person);
      const opened = await openDm(t, bot, { recipient_id: owner.person.id });
      expect(opened.statusCode, opened.body).toBe(200);
      const dmId = (opened.json() as { id: string }).id;
      t.clock.advance(10_000);
      const before = received.length;
      const posted = await owner.agent.submit(`/messages/${dmId}`, `/messages/${dmId}`, { content: '/chart' });
      expect(posted.statusCode).toBe(303);
      const interaction = received[before] as Received;
      const followUp = await api.interactions.followUp(interaction.application_id, interaction.token, { content: 'Your chart', files: [{ name: 'dm.png', data: pngHeader(40, 20), contentType: 'image/png' }] });
      expect(followUp).toMatchObject({ channel_id: dmId, content: 'Your chart', attachments: [{ filename: 'dm.png', width: 40, height: 20 }] });
      expect((await owner.agent.get(`/messages/${dmId}`)).body).toMatch(/<img src="[^"]*\/dm\.png\?/);
    } finally {
      await updateRole(t.services, operatorActing(), server.id, server.everyoneRoleId, { permissions: DEFAULT_EVERYONE_PERMISSIONS });
    }
  });
});
