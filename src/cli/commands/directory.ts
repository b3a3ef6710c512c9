import { parsePermissions } from '../../core/permissions.js';
import { ApiError } from '../../core/errors.js';
import { createChannel } from '../../modules/directory/channels.service.js';
import { addMember, findPersonToAdd } from '../../modules/directory/members.service.js';
import type { Person } from '../../modules/directory/people.js';
import { createRole } from '../../modules/directory/roles.service.js';
import { parseColor } from '../../modules/directory/roles.js';
import { createServer } from '../../modules/directory/servers.service.js';
import type { Services } from '../../deps.js';
import { CliUsageError, type CliCommand } from '../command.js';
import { cliActing } from '../../core/acting.js';

/**
 * `gatehouse servers|channels|roles|members …` (DESIGN §8). The operator acts (cliActing), outside
 * every server's permissions; the input rules are the pages' (same services).
 */
/** Issue #39: findPersonToAdd's refusal of a disabled person, which the operator can undo. */
function isDisabledRefusal(error: ApiError): boolean {
  return JSON.stringify(error.errors ?? {}).includes('"DISABLED_USER"');
}

async function personNamed(services: Services, flag: string, username: string): Promise<Person> {
  try {
    return await findPersonToAdd(services, username);
  } catch (error) {
    if (error instanceof ApiError && isDisabledRefusal(error)) throw new Error(`--${flag}: "${username}" is disabled: enable the account first (gatehouse people enable)`);
    if (error instanceof ApiError) throw new Error(`--${flag}: nobody (other than a bot) has the username "${username}"`);
    throw error;
  }
}

function required(value: string | undefined, flag: string): string {
  if (value === undefined) throw new CliUsageError(`--${flag} is required`);
  return value;
}

export const directoryCommands: CliCommand[] = [
  {
    name: 'servers create',
    summary: 'create a server with its @everyone role and #general channel',
    flags: {
      owner: { description: 'username of the owner', required: true },
      name: { description: 'server name (2–100 characters)', required: true },
      'icon-url': { description: 'https URL of an icon image' },
    },
    async run(services, flags) {
      const owner = await personNamed(services, 'owner', required(flags.string('owner'), 'owner'));
      const server = await createServer(services, cliActing(services.clock), { ownerId: owner.id, name: required(flags.string('name'), 'name'), iconUrl: flags.string('icon-url') ?? null });
      return {
        id: server.id,
        name: server.name,
        icon_url: server.iconUrl,
        owner_id: server.ownerId,
        everyone_role_id: server.everyoneRoleId,
        channels: server.channels.map((c) => ({ id: c.id, name: c.name, type: c.type, position: c.position })),
        created_at: new Date(server.createdAt).toISOString(),
      };
    },
  },
  {
    name: 'channels create',
    summary: 'create a text channel in a server',
    flags: {
      server: { description: 'server id', required: true },
      name: { description: 'channel name (lower-cased; spaces become dashes)', required: true },
      topic: { description: 'channel topic' },
    },
    async run(services, flags) {
      const channel = await createChannel(services, cliActing(services.clock), required(flags.string('server'), 'server'), { name: required(flags.string('name'), 'name'), topic: flags.string('topic') ?? null });
      return { id: channel.id, guild_id: channel.serverId, name: channel.name, topic: channel.topic, type: channel.type, position: channel.position };
    },
  },
  {
    name: 'roles create',
    summary: 'create a role with a permission bitfield',
    flags: {
      server: { description: 'server id', required: true },
      name: { description: 'role name (1–100 characters)', required: true },
      permissions: { description: 'permission bitfield as a decimal string (Discord bit positions; docs/permissions.md)', required: true },
      color: { description: 'colour like #5865f2' },
    },
    async run(services, flags) {
      const permissions = parsePermissions(required(flags.string('permissions'), 'permissions'));
      if (permissions === undefined) throw new CliUsageError('--permissions must be a non-negative decimal integer below 2^64, e.g. 8224 (Manage server + Manage messages)');
      const color = parseColor(flags.string('color') ?? '');
      if (color === undefined) throw new CliUsageError('--color must look like #5865f2');
      const role = await createRole(services, cliActing(services.clock), required(flags.string('server'), 'server'), { name: required(flags.string('name'), 'name'), permissions, color });
      return { id: role.id, guild_id: role.serverId, name: role.name, permissions: role.permissions.toString(), color: role.color, position: role.position };
    },
  },
  {
    name: 'members add',
    summary: 'add a person to a server, optionally with roles',
    flags: {
      server: { description: 'server id', required: true },
      username: { description: 'username of the person to add', required: true },
      role: { description: 'role id to give (repeatable)', repeatable: true },
    },
    async run(services, flags) {
      const person = await personNamed(services, 'username', required(flags.string('username'), 'username'));
      const member = await addMember(services, cliActing(services.clock), required(flags.string('server'), 'server'), person.id, flags.list('role'));
      return { guild_id: member.serverId, user_id: member.userId, username: person.username, roles: member.roleIds, joined_at: new Date(member.joinedAt).toISOString() };
    },
  },
];
