import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Permission } from '../../src/core/permissions.js';
import { addMember, setMemberRoles } from '../../src/modules/directory/members.service.js';
import { createRole, updateRole } from '../../src/modules/directory/roles.service.js';
import { createServer } from '../../src/modules/directory/servers.service.js';
import { operatorActing, personActingOf } from '../support/acting.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { multipartBody, pngHeader } from '../support/multipart.js';
import { createPerson } from '../support/oauth-factory.js';
import { createBot, type TestBot } from './dms.fixtures.js';

/**
 * Issue #42 §2: a bot posts files with POST /api/v1/channels/{id}/messages as Discord's
 * multipart body; it needs Attach files besides Send messages, checked before anything is stored.
 */
let t: TestApp;
let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gatehouse-bot-files-'));
  t = await createTestApp({ env: { GATEHOUSE_FILES_DIR: dir } });
});
afterAll(async () => {
  await t.close();
  rmSync(dir, { recursive: true, force: true });
});

async function serverWithBot(permissions: bigint): Promise<{ bot: TestBot; channelId: string }> {
  const owner = await createPerson(t);
  const server = await createServer(t.services, personActingOf(owner.id), { name: 'Workshop' });
  await updateRole(t.services, operatorActing(), server.id, server.everyoneRoleId, { permissions: 0n });
  const bot = await createBot(t, { name: 'Uploader' });
  await addMember(t.services, operatorActing(), server.id, bot.botUserId);
  const role = await createRole(t.services, operatorActing(), server.id, { name: 'Bots', permissions });
  await setMemberRoles(t.services, operatorActing(), server.id, bot.botUserId, [role.id]);
  return { bot, channelId: server.channels[0]?.id as string };
}

async function postFiles(bot: TestBot, channelId: string) {
  const body = await multipartBody({ payload_json: JSON.stringify({ content: 'Screenshot', attachments: [{ id: 0, description: 'The failing page' }] }) }, [
    { field: 'files[0]', filename: 'screen.png', type: 'image/png', data: pngHeader(1280, 720) },
  ]);
  return t.app.inject({ method: 'POST', url: `/api/v1/channels/${channelId}/messages`, headers: { ...bot.headers, ...body.headers }, payload: body.payload });
}

describe('bots post files (POST /api/v1/channels/{channelId}/messages, multipart)', () => {
  it('with View channel, Send messages and Attach files: 200, the message carries the attachment', async () => {
    const { bot, channelId } = await serverWithBot(Permission.VIEW_CHANNEL | Permission.SEND_MESSAGES | Permission.ATTACH_FILES);
    const res = await postFiles(bot, channelId);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ content: 'Screenshot', author: { id: bot.botUserId, bot: true }, attachments: [{ filename: 'screen.png', width: 1280, height: 720, content_type: 'image/png', description: 'The failing page' }] });
  });

  it('without Attach files: 403 50013, and nothing is stored', async () => {
    const { bot, channelId } = await serverWithBot(Permission.VIEW_CHANNEL | Permission.SEND_MESSAGES);
    const before = (await t.services.db.selectFrom('attachments').select('id').execute()).length;
    const res = await postFiles(bot, channelId);
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual({ code: 50013, message: 'Missing Permissions' });
    expect((await t.services.db.selectFrom('attachments').select('id').execute()).length).toBe(before);
  });

  it('a JSON post still works as before on the same route', async () => {
    const { bot, channelId } = await serverWithBot(Permission.VIEW_CHANNEL | Permission.SEND_MESSAGES);
    const res = await t.app.inject({ method: 'POST', url: `/api/v1/channels/${channelId}/messages`, headers: bot.headers, payload: { content: 'plain' } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ content: 'plain', attachments: [] });
  });
});
