import type { Actor } from '../../core/actor.js';
import { ApiErrors } from '../../core/errors.js';
import type { Deps } from '../../deps.js';
import { authorize } from './access.service.js';
import { getChannels } from './channels.service.js';
import type { Channel } from './channels.js';
import { ServerAction } from './policy.js';
import type { Role } from './roles.js';
import { getRole } from './roles.service.js';
import { SECTION_NEEDS, type SettingsSection } from './server-settings.js';
import type { Server } from './servers.js';
import { getServer, loadServerSettings, type ServerSettingsData } from './servers.service.js';

/**
 * What the directory's pages read for an actor, with the same checks as the services that change
 * it (policy.ts): a non-member gets 10004 as for a server that does not exist, a member without
 * the section's permission 50013.
 */

export interface SettingsView {
  /** The actor's permissions there, to offer only what they may do. */
  permissions: bigint;
  data: ServerSettingsData;
  /** How many invitations await an answer (members section only). */
  pendingInvitations: number;
  role?: Role;
}

/** One settings section of a server (for `role`, the role `roleId`: 10011 when there is none). */
export async function settingsView(deps: Deps, actor: Actor, serverId: string, section: SettingsSection, roleId?: string): Promise<SettingsView> {
  const permissions = await authorize(deps, actor, serverId, SECTION_NEEDS[section]);
  const role = section === 'role' ? await getRole(deps, serverId, roleId ?? '') : undefined;
  const data = await loadServerSettings(deps, serverId);
  if (!data) throw ApiErrors.unknownServer();
  const pending = section === 'members' ? data.invitations.length : 0;
  return { permissions, data, pendingInvitations: pending, ...(role ? { role } : {}) };
}

/** A server the actor is a member of (10004 otherwise), with their permissions and its channels in order. */
export async function memberServer(deps: Deps, actor: Actor, serverId: string): Promise<{ server: Server; permissions: bigint; channels: Channel[] }> {
  const permissions = await authorize(deps, actor, serverId, ServerAction.view);
  const server = await getServer(deps, serverId);
  if (!server) throw ApiErrors.unknownServer();
  return { server, permissions, channels: await getChannels(deps, serverId) };
}
