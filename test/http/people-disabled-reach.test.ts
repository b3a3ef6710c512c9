import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inviteMember } from '../../src/modules/directory/members.service.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { runCommand } from '../support/directory-fixtures.js';
import { given } from '../support/given.js';
import { personActingOf } from '../support/acting.js';
import { botPost, createBot, openDm, userInstall } from './dms.fixtures.js';

/**
 * Issue #39: a disabled person disappears from what reaches people by name or id — a member's
 * invite form (the same answer as for an unknown username, no invitation), the operator's
 * `members add` (told why), and a bot's direct messages (50007, opening and posting) — until the
 * operator enables them. Runs on PostgreSQL too with TEST_DATABASE_URL.
 */

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

const disable = (username: string) => runCommand(t, 'people disable', ['--username', username, '--yes']);
const enable = (username: string) => runCommand(t, 'people enable', ['--username', username]);

async function invitationsFor(userId: string): Promise<number> {
  return (await t.services.db.selectFrom('member_invitations').select('id').where('user_id', '=', userId).execute()).length;
}

describe('a disabled person out of reach', () => {
  it('an invitation by username to a disabled person answers as for an unknown name and creates nothing; enabled, it is sent', async () => {
    const owner = await given.person(t);
    const server = await given.server(t, { owner });
    const invitee = await given.person(t);
    await disable(invitee.username);

    await expect(inviteMember(t.services, personActingOf(owner.id), server.id, invitee.username)).resolves.toBeUndefined();
    expect(await invitationsFor(invitee.id)).toBe(0);

    await enable(invitee.username);
    await inviteMember(t.services, personActingOf(owner.id), server.id, invitee.username);
    expect(await invitationsFor(invitee.id)).toBe(1);
  });

  it('the operator’s members add refuses a disabled person at --username, saying why', async () => {
    const owner = await given.person(t);
    const server = await given.server(t, { owner });
    const person = await given.person(t);
    await disable(person.username);
    await expect(runCommand(t, 'members add', ['--server', server.id, '--username', person.username])).rejects.toThrow(`--username: "${person.username}" is disabled: enable the account first (gatehouse people enable)`);
    expect(await t.services.db.selectFrom('members').select('user_id').where('user_id', '=', person.id).execute()).toEqual([]);
  });

  it('a bot cannot open a DM with a disabled person nor post in their open DM (403 50007); enabled, it can again', async () => {
    const person = await given.person(t);
    const bot = await createBot(t, { name: 'Reminder' });
    await userInstall(t, bot, person);
    const opened = await openDm(t, bot, { recipient_id: person.id });
    expect(opened.statusCode).toBe(200);
    const channelId = (opened.json() as { id: string }).id;

    await disable(person.username);
    const refusedOpen = await openDm(t, bot, { recipient_id: person.id });
    expect(refusedOpen.statusCode).toBe(403);
    expect(refusedOpen.json()).toMatchObject({ code: 50007 });
    const refusedPost = await botPost(t, bot, channelId, { content: 'Still there?' });
    expect(refusedPost.statusCode).toBe(403);
    expect(refusedPost.json()).toMatchObject({ code: 50007 });

    await enable(person.username);
    expect((await botPost(t, bot, channelId, { content: 'Welcome back.' })).statusCode).toBe(200);
  });
});
