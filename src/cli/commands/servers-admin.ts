import { cliActing } from '../../core/acting.js';
import { ApiError } from '../../core/errors.js';
import type { Services } from '../../deps.js';
import type { Person } from '../../modules/directory/people.js';
import { transferServer } from '../../modules/directory/server-transfer.service.js';
import type { Server, ServerContents } from '../../modules/directory/servers.js';
import { listServers, SERVERS_PAGE_MAX, showServer } from '../../modules/directory/servers-admin.service.js';
import { deleteServer } from '../../modules/directory/servers.service.js';
import type { CliCommand, ParsedFlags } from '../command.js';
import { confirmDestructive, pageLimit, YES_FLAG } from '../confirm.js';

/** Issue #39: an unknown --server is said plainly (exit status 1), naming the flag. */
async function withServer<T>(serverId: string, work: (serverId: string) => Promise<T>): Promise<T> {
  try {
    return await work(serverId);
  } catch (error) {
    if (error instanceof ApiError && error.code === 10004) throw new Error(`--server: no server has the id "${serverId}"`);
    throw error;
  }
}

function serverId(flags: ParsedFlags): string {
  return flags.string('server') ?? '';
}

/** A server as the operator's commands print it (the API's field names, DESIGN §8). */
function serverRecord(server: Server, owner: Person | undefined): Record<string, unknown> {
  return { id: server.id, name: server.name, owner_id: server.ownerId, owner_username: owner?.username ?? null, mfa_level: server.mfaLevel, created_at: new Date(server.createdAt).toISOString() };
}

function contentsRecord(c: ServerContents): Record<string, number> {
  return { channels: c.channels, messages: c.messages, webhooks: c.webhooks, roles: c.roles, members: c.members, bot_installs: c.botInstalls, invite_links: c.inviteLinks, pending_invitations: c.pendingInvitations };
}

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

function shown(services: Services, id: string) {
  return withServer(id, (server) => showServer(services, { kind: 'operator' }, server));
}

const SERVER = { server: { description: 'server id', required: true } };

/** `gatehouse servers list|show|delete|transfer` (issue #39; docs/operations.md "Apps and servers"). */
export const serversAdminCommands: CliCommand[] = [
  {
    name: 'servers list',
    summary: 'list servers, oldest first (paged: --after the last id shown)',
    flags: {
      owner: { description: 'only the servers this username owns' },
      after: { description: 'the next page: servers after this id (next_after of the previous page)' },
      limit: { description: `at most this many (1–${SERVERS_PAGE_MAX}, default ${SERVERS_PAGE_MAX})` },
    },
    async run(services, flags) {
      const page = await listServers(services, { kind: 'operator' }, { owner: flags.string('owner'), after: flags.string('after'), limit: pageLimit(flags, SERVERS_PAGE_MAX) });
      return { count: page.servers.length, servers: page.servers.map((s) => serverRecord(s.server, s.owner)), next_after: page.next ?? null };
    },
  },
  {
    name: 'servers show',
    summary: 'one server: its owner and what deleting it removes',
    flags: SERVER,
    async run(services, flags) {
      const found = await shown(services, serverId(flags));
      return { ...serverRecord(found.server, found.owner), ...contentsRecord(found.contents) };
    },
  },
  {
    name: 'servers delete',
    summary: 'delete a server with its channels, messages, webhooks, roles, memberships and bot installs',
    flags: { ...SERVER, ...YES_FLAG },
    async run(services, flags) {
      const found = await shown(services, serverId(flags));
      const c = found.contents;
      await confirmDestructive(
        `Deleting ${found.server.name} (${found.server.id}) removes ${plural(c.channels, 'channel')}, ${plural(c.messages, 'message')}, ${plural(c.webhooks, 'webhook')}, ${plural(c.roles, 'role')}, ${plural(c.members, 'member')} besides the owner, ${plural(c.botInstalls, 'bot install')}, ${plural(c.inviteLinks, 'invite link')} and ${plural(c.pendingInvitations, 'pending invitation')}. This cannot be undone.`,
        flags.bool('yes'),
      );
      await withServer(found.server.id, (id) => deleteServer(services, cliActing(services.clock), id));
      return { id: found.server.id, name: found.server.name, deleted: true, removed: contentsRecord(c) };
    },
  },
  {
    name: 'servers transfer',
    summary: 'make another member the owner of a server (the previous owner stays a member)',
    flags: { ...SERVER, to: { description: 'username of the new owner: a member of the server, not a bot', required: true }, ...YES_FLAG },
    async run(services, flags) {
      const found = await shown(services, serverId(flags));
      const to = flags.string('to') ?? '';
      await confirmDestructive(`Transferring ${found.server.name} (${found.server.id}) from @${found.owner?.username ?? found.server.ownerId} to @${to.replace(/^@/, '')}: only the new owner can delete it or give it away.`, flags.bool('yes'));
      const done = await withServer(found.server.id, (id) => transferServer(services, cliActing(services.clock), id, { username: to }));
      return { ...serverRecord(done.server, done.to), previous_owner_id: done.from, previous_owner_username: found.owner?.username ?? null };
    },
  },
];
