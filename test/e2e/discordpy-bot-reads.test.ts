import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Permission } from '../../src/core/permissions.js';
import { addMember } from '../../src/modules/directory/members.service.js';
import { createRole } from '../../src/modules/directory/roles.service.js';
import { createServer } from '../../src/modules/directory/servers.service.js';
import { postMessage } from '../../src/modules/messages/messages.service.js';
import { createBot } from '../http/dms.fixtures.js';
import { serveTestApp, type ServedApp } from '../support/browser.js';
import { discordPyMissing, runClientScript } from '../support/discordpy.js';
import { createPerson } from '../support/oauth-factory.js';
import { operatorActing, personActingOf } from '../support/acting.js';

/**
 * Issue #40 §4 with unmodified discord.py (Debian's python3-discord on /usr/bin/python3): a bot
 * logs in over REST, fetches a channel and its history (all of it, before, after, around), one
 * message, its server with the roles, and a member. test/clients/discordpy_bot_reads.py drives the
 * library and reports what it observed; the assertions are here.
 */

const missing = discordPyMissing();
if (missing) console.warn(`skipping the discord.py bot-read tests: ${missing}`);

interface Report {
  version: string;
  me: { id: number; bot: boolean };
  channel: { class: string; id: number; name: string; guild_id: number };
  history: string[];
  before: string[];
  after: string[];
  around: string[];
  message: { id: number; content: string; author_id: number; author_name: string; channel_id: number };
  guild: { id: number; name: string; owner_id: number; roles: string[] };
  member: { id: number; name: string; roles: number[]; joined: boolean };
  foreign_guild: { class: string; status: number; code: number } | null;
}

let served: ServedApp;
let report: Report;
const ids: Record<'bot' | 'owner' | 'server' | 'channel' | 'role' | 'anchor', string> = { bot: '', owner: '', server: '', channel: '', role: '', anchor: '' };

beforeAll(async () => {
  if (missing) return;
  served = await serveTestApp();
  const owner = await createPerson(served.t, { username: 'pyowner' });
  const bot = await createBot(served.t, { name: 'Py Reader', owner });
  const server = await createServer(served.t.services, personActingOf(owner.id), { name: 'Python Reads' });
  const channelId = server.channels[0]?.id as string;
  const role = await createRole(served.t.services, operatorActing(), server.id, { name: 'Readers', permissions: Permission.VIEW_CHANNEL | Permission.READ_MESSAGE_HISTORY });
  await addMember(served.t.services, operatorActing(), server.id, bot.botUserId, [role.id]);
  const said: string[] = [];
  for (let i = 1; i <= 7; i += 1) said.push((await postMessage(served.t.services, personActingOf(owner.id), channelId, `py ${i}`)).id);
  const elsewhere = await createServer(served.t.services, personActingOf(owner.id), { name: 'Not Yours' });
  Object.assign(ids, { bot: bot.botUserId, owner: owner.id, server: server.id, channel: channelId, role: role.id, anchor: said[3] as string });
  const job = { base: served.baseUrl, token: bot.token, channel_id: channelId, anchor_id: said[3], guild_id: server.id, member_id: bot.botUserId, foreign_guild_id: elsewhere.id };
  const run = await runClientScript('discordpy_bot_reads.py', JSON.stringify(job));
  if (run.status !== 0) throw new Error(`discord.py exited with ${run.status}: ${run.stderr}`);
  report = JSON.parse(run.stdout) as Report;
}, 180_000);
afterAll(async () => served?.close());

describe.skipIf(missing !== undefined)('discord.py reads with a bot token (unmodified)', () => {
  it('logs in over REST and fetches the channel as a TextChannel of the server', () => {
    expect(report.me).toEqual({ id: Number(ids.bot), bot: true });
    expect(report.channel).toEqual({ class: 'TextChannel', id: Number(ids.channel), name: 'general', guild_id: Number(ids.server) });
  });

  it('reads the whole history newest first, and pages before, after and around a message', () => {
    expect(report.history).toEqual(['py 7', 'py 6', 'py 5', 'py 4', 'py 3', 'py 2', 'py 1']);
    expect(report.before).toEqual(['py 3', 'py 2']);
    // discord.py gives `after` oldest first, as it does on Discord.
    expect(report.after).toEqual(['py 5', 'py 6']);
    expect(report.around).toEqual(['py 5', 'py 4', 'py 3']);
    expect(report.message).toEqual({ id: Number(ids.anchor), content: 'py 4', author_id: Number(ids.owner), author_name: 'pyowner', channel_id: Number(ids.channel) });
  });

  it('fetches the server with its roles and the bot as a member; a server it is not in is NotFound 10004', () => {
    expect(report.guild).toEqual({ id: Number(ids.server), name: 'Python Reads', owner_id: Number(ids.owner), roles: ['@everyone', 'Readers'] });
    expect(report.member.id).toBe(Number(ids.bot));
    expect(report.member.roles).toContain(Number(ids.role));
    expect(report.member.joined).toBe(true);
    expect(report.foreign_guild).toEqual({ class: 'NotFound', status: 404, code: 10004 });
  });
});
