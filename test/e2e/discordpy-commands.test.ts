import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listApplicationCommands } from '../../src/modules/applications/commands.service.js';
import { createServer } from '../../src/modules/directory/servers.service.js';
import { installWithCommands } from '../http/interactions.fixtures.js';
import { personActingOf } from '../support/acting.js';
import { serveTestApp, type ServedApp } from '../support/browser.js';
import { discordPyMissing, runClientScript } from '../support/discordpy.js';
import { given } from '../support/given.js';
import { createPerson } from '../support/oauth-factory.js';

/**
 * Issue #40 §2 with unmodified discord.py (Debian's python3-discord on /usr/bin/python3): an
 * app_commands.CommandTree syncs global commands (one with `default_permissions`, one
 * `guild_only`) and a command for one server the app is installed in (a guild command), and
 * fetches both back; syncing a server the app is not in is Forbidden 50001.
 * test/clients/discordpy_commands.py drives the library and reports; the assertions are here.
 */

const missing = discordPyMissing();
if (missing) console.warn(`skipping the discord.py command tests: ${missing}`);

interface CommandFacts {
  id: number;
  name: string;
  description: string;
  guild_id: number | null;
  options: string[];
  default_member_permissions: number | null;
  dm_permission: boolean;
}

interface Report {
  version: string;
  application_id: number;
  synced_global: CommandFacts[];
  synced_guild: CommandFacts[];
  fetched_global: string[];
  fetched_guild: string[];
  foreign_guild: { class: string; status: number; code: number } | null;
}

let served: ServedApp;
let report: Report;
const ids = { app: '', server: '' };

beforeAll(async () => {
  if (missing) return;
  served = await serveTestApp();
  const owner = await createPerson(served.t, { username: 'pycommands' });
  const bot = await given.bot(served.t, { owner, name: 'Py Commands' });
  const server = await createServer(served.t.services, personActingOf(owner.id), { name: 'Python Commands' });
  await installWithCommands(served.t, { bot, appName: 'Py Commands', installerId: owner.id, serverId: server.id });
  const elsewhere = await createServer(served.t.services, personActingOf(owner.id), { name: 'Not Installed' });
  Object.assign(ids, { app: bot.client.app.id, server: server.id });
  const run = await runClientScript('discordpy_commands.py', JSON.stringify({ base: served.baseUrl, token: bot.token, guild_id: server.id, foreign_guild_id: elsewhere.id }));
  if (run.status !== 0) throw new Error(`discord.py exited with ${run.status}: ${run.stderr}`);
  report = JSON.parse(run.stdout) as Report;
}, 180_000);
afterAll(async () => served?.close());

describe.skipIf(missing !== undefined)('discord.py registers slash commands (unmodified)', () => {
  it('logs in over REST and learns its application id', () => {
    expect(report.application_id).toBe(Number(ids.app));
  });

  it('syncs the global tree: the commands come back with their options, default_member_permissions and dm_permission (guild_only)', () => {
    expect(report.synced_global).toEqual([
      { id: expect.any(Number), name: 'purge', description: 'Deletes messages', guild_id: null, options: [], default_member_permissions: 8192, dm_permission: false },
      { id: expect.any(Number), name: 'roll', description: 'Rolls a die', guild_id: null, options: ['sides'], default_member_permissions: null, dm_permission: true },
    ]);
    expect(report.fetched_global).toEqual(['purge', 'roll']);
  });

  it('syncs the server’s tree as guild commands: they carry its id, stay out of the global list, and are offered in that server', async () => {
    expect(report.synced_guild).toEqual([{ id: expect.any(Number), name: 'setup', description: 'Sets this server up', guild_id: Number(ids.server), options: [], default_member_permissions: null, dm_permission: false }]);
    expect(report.fetched_guild).toEqual(['setup']);
    const offered = await listApplicationCommands(served.t.services, ids.app, ids.server);
    expect(offered.map((c) => c.name)).toEqual(['purge', 'roll', 'setup']);
  });

  it('syncing a server the app is not installed in is Forbidden (403, 50001)', () => {
    expect(report.foreign_guild).toEqual({ class: 'Forbidden', status: 403, code: 50001 });
  });
});
