import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, PageError, invalidField } from '../../core/errors.js';
import { Permission } from '../../core/permissions.js';
import type { App } from '../../http/app-type.js';
import type { Services } from '../../services.js';
import type { Viewer } from '../../web/layout.js';
import { pageContext, requireViewer, sendHtml } from '../../http/pages.js';
import { createChannel, deleteChannel, getChannels } from './channels.service.js';
import { refused, type FormError, type FormValues } from '../../web/components.js';
import { homePage, emptyServerPage, landingPage } from './home.page.js';
import { invitePage } from './invite.page.js';
import { deleteServerPage, leaveServerPage } from './server-lifecycle.page.js';
import { settingsAbilities, type SettingsPageInput, type SettingsSection } from './server-settings.js';
import { settingsPage } from './server-settings.page.js';
import {
  AddMemberBody,
  ChannelBody,
  CsrfOnlyBody,
  DoneQuery,
  InvitationParams,
  InviteBody,
  InviteParams,
  MemberRolesBody,
  NameBody,
  RoleBody,
  ServerChannelParams,
  ServerInviteParams,
  ServerMemberParams,
  ServerParams,
  ServerRoleParams,
  SettingsSectionParams,
} from './directory.schemas.js';
import { parseInviteLifetime, parseInviteMaxUses } from './invites.js';
import { acceptInvite, createInvite, deleteInvite, describeInvite } from './invites.service.js';
import {
  acceptInvitation,
  declineInvitation,
  getMember,
  inviteMember,
  leaveServer,
  pendingInvitationCount,
  pendingInvitations,
  removeMember,
  setMemberRoles,
} from './members.service.js';
import { requireAnyServerPermission, requireServerPermission } from './access.service.js';
import { requireGrantable, requireMemberInReach, requireRoleInReach } from './policy.js';
import { SERVER_NOT_FOUND } from '../../http/page-errors.js';
import { parseColor, permissionsFromNames, type Role } from './roles.js';
import { createRole, deleteRole, getRole, getRoles, updateRole } from './roles.service.js';
import {
  createServer,
  deleteServer,
  getServer,
  homeOverview,
  loadServerSettings,
  memberPermissions,
  renameServer,
  serverDeletionPreview,
} from './servers.service.js';

/** Page routes are HTML, not API: kept out of the OpenAPI document. */
const hide = { hide: true } as const;

/** Confirmations shown after post/redirect/get, by `?done=` key. */
const NOTICES: Record<string, string> = {
  renamed: 'Server renamed.',
  'channel-created': 'Channel created.',
  'channel-deleted': 'Channel deleted.',
  'role-created': 'Role created.',
  'role-saved': 'Role saved.',
  'role-deleted': 'Role deleted.',
  // The same words whether or not the username exists (issue #21 §3: the form is no username oracle).
  'invitation-sent': 'Invitation sent. If that username belongs to someone, they see it on their home page and become a member once they accept it.',
  'roles-saved': 'Roles saved.',
  'member-removed': 'Member removed.',
  'invite-revoked': 'Invite link revoked.',
};

/** Who may open which settings section (docs/permissions.md). */
const SECTION_ACCESS: Record<Exclude<SettingsSection, 'role'>, bigint> = {
  overview: Permission.MANAGE_SERVER | Permission.MANAGE_CHANNELS | Permission.MANAGE_ROLES,
  channels: Permission.MANAGE_CHANNELS,
  roles: Permission.MANAGE_ROLES,
  members: Permission.MANAGE_SERVER | Permission.MANAGE_ROLES,
  invites: Permission.CREATE_INSTANT_INVITE | Permission.MANAGE_SERVER,
};

function isSection(value: string): value is Exclude<SettingsSection, 'role' | 'overview'> {
  return value === 'channels' || value === 'roles' || value === 'members' || value === 'invites';
}

function asList(value: string[] | undefined): string[] {
  return value ?? [];
}

/** Home, servers, settings (channels, roles, members, invites), invite links (pages context: viewer + CSRF). */
export function registerDirectoryPages(pages: App, services: Services): void {
  interface RenderExtra {
    role?: Role;
    error?: FormError;
    values?: FormValues;
    notice?: string | undefined;
    createdInviteUrl?: string;
    status?: number;
  }

  /** Confirmations on the home page after post/redirect/get. */
  const HOME_NOTICES: Record<string, string> = {
    'invitation-declined': 'Invitation declined.',
    left: 'You left the server.',
    'server-deleted': 'Server deleted.',
  };

  async function renderHome(request: FastifyRequest, reply: FastifyReply, viewer: Viewer, extra: { notice?: string | undefined; error?: FormError; values?: FormValues; status?: number } = {}) {
    const [servers, invitations] = await Promise.all([homeOverview(services, viewer.id), pendingInvitations(services, viewer.id)]);
    return sendHtml(
      reply,
      homePage({
        ctx: pageContext(request, services),
        servers,
        invitations,
        ...(extra.notice ? { notice: extra.notice } : {}),
        ...(extra.error ? { error: extra.error } : {}),
        ...(extra.values ? { values: extra.values } : {}),
      }),
      extra.status ?? 200,
    );
  }

  /** Renders one settings section for a viewer whose permissions are already checked. */
  async function renderSettings(request: FastifyRequest, reply: FastifyReply, serverId: string, permissions: bigint, section: SettingsSection, extra: RenderExtra = {}) {
    const data = await loadServerSettings(services, serverId);
    if (!data) throw new PageError(404, SERVER_NOT_FOUND.title, SERVER_NOT_FOUND.detail);
    const pending = section === 'members' ? await pendingInvitationCount(services, serverId) : 0;
    const names = new Map(data.members.map((m) => [m.userId, m.person.name]));
    const input: SettingsPageInput = {
      ctx: pageContext(request, services),
      section,
      server: data.server,
      permissions,
      can: settingsAbilities(permissions),
      channels: data.channels,
      roles: data.roles,
      members: data.members,
      invites: data.invites.map((i) => ({ ...i, creatorName: names.get(i.creatorId) ?? 'a former member' })),
      pendingInvitations: pending,
      now: services.clock.now(),
      ...(extra.role ? { role: extra.role } : {}),
      ...(extra.error ? { error: extra.error } : {}),
      ...(extra.values ? { values: extra.values } : {}),
      ...(extra.notice ? { notice: extra.notice } : {}),
      ...(extra.createdInviteUrl ? { createdInviteUrl: extra.createdInviteUrl } : {}),
    };
    return sendHtml(reply, settingsPage(input), extra.status ?? 200);
  }

  /** A role of this server for a settings page, or the not-found page. */
  async function roleOr404(serverId: string, roleId: string): Promise<Role> {
    try {
      return await getRole(services, serverId, roleId);
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) throw new PageError(404, 'Role not found', 'This role does not exist in this server.');
      throw error;
    }
  }

  function viewerOf(request: FastifyRequest, reply: FastifyReply): Viewer | undefined {
    return requireViewer(request, reply);
  }

  // --- Home and servers ---

  pages.get('/', { schema: { ...hide, querystring: DoneQuery } }, async (request, reply) => {
    const ctx = pageContext(request, services);
    if (!request.viewer) return sendHtml(reply, landingPage(ctx));
    return renderHome(request, reply, request.viewer, { notice: HOME_NOTICES[request.query.done ?? ''] });
  });

  pages.post('/servers', { schema: { ...hide, body: NameBody } }, async (request, reply) => {
    const viewer = viewerOf(request, reply);
    if (!viewer) return reply;
    try {
      const server = await createServer(services, viewer.id, { name: request.body.name ?? '' });
      return reply.redirect(`/servers/${server.id}`, 303);
    } catch (error) {
      return renderHome(request, reply, viewer, refused(error, 'create-server', { name: request.body.name }));
    }
  });

  // --- Invitations, leaving, deleting (issue #21 §3: membership by consent, and a way out) ---

  pages.post('/invitations/:invitationId/accept', { schema: { ...hide, params: InvitationParams, body: CsrfOnlyBody } }, async (request, reply) => {
    const viewer = viewerOf(request, reply);
    if (!viewer) return reply;
    try {
      const { serverId } = await acceptInvitation(services, request.params.invitationId, viewer.id);
      return reply.redirect(`/servers/${serverId}`, 303);
    } catch (error) {
      return renderHome(request, reply, viewer, refused(error, 'invitation', {}));
    }
  });

  pages.post('/invitations/:invitationId/decline', { schema: { ...hide, params: InvitationParams, body: CsrfOnlyBody } }, async (request, reply) => {
    const viewer = viewerOf(request, reply);
    if (!viewer) return reply;
    try {
      await declineInvitation(services, request.params.invitationId, viewer.id);
      return reply.redirect('/?done=invitation-declined', 303);
    } catch (error) {
      return renderHome(request, reply, viewer, refused(error, 'invitation', {}));
    }
  });

  /** A server the viewer is a member of, or the not-found page (the same for servers they cannot see). */
  async function serverOfMember(serverId: string, viewerId: string) {
    await requireServerPermission(services, serverId, viewerId, 0n);
    const server = await getServer(services, serverId);
    if (!server) throw new PageError(404, SERVER_NOT_FOUND.title, SERVER_NOT_FOUND.detail);
    return server;
  }

  pages.get('/servers/:serverId/leave', { schema: { ...hide, params: ServerParams } }, async (request, reply) => {
    const viewer = viewerOf(request, reply);
    if (!viewer) return reply;
    const server = await serverOfMember(request.params.serverId, viewer.id);
    if (server.ownerId === viewer.id) return reply.redirect(`/servers/${server.id}/delete`, 303);
    return sendHtml(reply, leaveServerPage(pageContext(request, services), server));
  });

  pages.post('/servers/:serverId/leave', { schema: { ...hide, params: ServerParams, body: CsrfOnlyBody } }, async (request, reply) => {
    const viewer = viewerOf(request, reply);
    if (!viewer) return reply;
    const server = await serverOfMember(request.params.serverId, viewer.id);
    try {
      await leaveServer(services, server.id, viewer.id);
      return reply.redirect('/?done=left', 303);
    } catch (error) {
      const r = refused(error, 'leave', {});
      return sendHtml(reply, leaveServerPage(pageContext(request, services), server, r.error.message), r.status);
    }
  });

  /** The owner's deletion preview, or the not-found page for non-members and 403 for other members. */
  async function deletionPreviewOrPage(serverId: string, viewerId: string) {
    await requireServerPermission(services, serverId, viewerId, 0n);
    try {
      return await serverDeletionPreview(services, serverId, viewerId);
    } catch (error) {
      if (error instanceof ApiError && error.status === 403) throw new PageError(403, 'Only the owner can delete this server', error.message);
      if (error instanceof ApiError && error.status === 404) throw new PageError(404, SERVER_NOT_FOUND.title, SERVER_NOT_FOUND.detail);
      throw error;
    }
  }

  pages.get('/servers/:serverId/delete', { schema: { ...hide, params: ServerParams } }, async (request, reply) => {
    const viewer = viewerOf(request, reply);
    if (!viewer) return reply;
    const { server, contents } = await deletionPreviewOrPage(request.params.serverId, viewer.id);
    return sendHtml(reply, deleteServerPage(pageContext(request, services), server, contents));
  });

  pages.post('/servers/:serverId/delete', { schema: { ...hide, params: ServerParams, body: CsrfOnlyBody } }, async (request, reply) => {
    const viewer = viewerOf(request, reply);
    if (!viewer) return reply;
    const { server } = await deletionPreviewOrPage(request.params.serverId, viewer.id);
    await deleteServer(services, server.id, viewer.id);
    return reply.redirect('/?done=server-deleted', 303);
  });

  pages.get('/servers/:serverId', { schema: { ...hide, params: ServerParams } }, async (request, reply) => {
    const viewer = viewerOf(request, reply);
    if (!viewer) return reply;
    const { serverId } = request.params;
    const permissions = await requireServerPermission(services, serverId, viewer.id, 0n);
    const channels = await getChannels(services, serverId);
    const first = channels[0];
    if (first) return reply.redirect(`/channels/${first.id}`, 303);
    const data = await loadServerSettings(services, serverId);
    if (!data) throw new PageError(404, SERVER_NOT_FOUND.title, SERVER_NOT_FOUND.detail);
    return sendHtml(reply, emptyServerPage(pageContext(request, services), data.server, settingsAbilities(permissions).manageChannels));
  });

  // --- Settings pages ---

  pages.get('/servers/:serverId/settings', { schema: { ...hide, params: ServerParams, querystring: DoneQuery } }, async (request, reply) => {
    const viewer = viewerOf(request, reply);
    if (!viewer) return reply;
    const { serverId } = request.params;
    const permissions = await requireAnyServerPermission(services, serverId, viewer.id, SECTION_ACCESS.overview);
    return renderSettings(request, reply, serverId, permissions, 'overview', { notice: NOTICES[request.query.done ?? ''] });
  });

  pages.get('/servers/:serverId/settings/:section', { schema: { ...hide, params: SettingsSectionParams, querystring: DoneQuery } }, async (request, reply) => {
    const viewer = viewerOf(request, reply);
    if (!viewer) return reply;
    const { serverId, section } = request.params;
    if (!isSection(section)) throw new PageError(404, 'Page not found', 'There is nothing at this address.');
    const permissions = await requireAnyServerPermission(services, serverId, viewer.id, SECTION_ACCESS[section]);
    return renderSettings(request, reply, serverId, permissions, section, { notice: NOTICES[request.query.done ?? ''] });
  });

  pages.get('/servers/:serverId/settings/roles/:roleId', { schema: { ...hide, params: ServerRoleParams, querystring: DoneQuery } }, async (request, reply) => {
    const viewer = viewerOf(request, reply);
    if (!viewer) return reply;
    const { serverId, roleId } = request.params;
    const permissions = await requireServerPermission(services, serverId, viewer.id, Permission.MANAGE_ROLES);
    const role = await roleOr404(serverId, roleId);
    return renderSettings(request, reply, serverId, permissions, 'role', { role, notice: NOTICES[request.query.done ?? ''] });
  });

  pages.post('/servers/:serverId/settings', { schema: { ...hide, params: ServerParams, body: NameBody } }, async (request, reply) => {
    const viewer = viewerOf(request, reply);
    if (!viewer) return reply;
    const { serverId } = request.params;
    const permissions = await requireServerPermission(services, serverId, viewer.id, Permission.MANAGE_SERVER);
    try {
      await renameServer(services, serverId, request.body.name ?? '');
      return reply.redirect(`/servers/${serverId}/settings?done=renamed`, 303);
    } catch (error) {
      return renderSettings(request, reply, serverId, permissions, 'overview', refused(error, 'rename', { name: request.body.name }));
    }
  });

  // --- Channels ---

  pages.post('/servers/:serverId/channels', { schema: { ...hide, params: ServerParams, body: ChannelBody } }, async (request, reply) => {
    const viewer = viewerOf(request, reply);
    if (!viewer) return reply;
    const { serverId } = request.params;
    const permissions = await requireServerPermission(services, serverId, viewer.id, Permission.MANAGE_CHANNELS);
    try {
      await createChannel(services, serverId, { name: request.body.name ?? '', topic: request.body.topic ?? null });
      return reply.redirect(`/servers/${serverId}/settings/channels?done=channel-created`, 303);
    } catch (error) {
      return renderSettings(request, reply, serverId, permissions, 'channels', refused(error, 'create-channel', { name: request.body.name, topic: request.body.topic }));
    }
  });

  pages.post('/servers/:serverId/channels/:channelId/delete', { schema: { ...hide, params: ServerChannelParams, body: CsrfOnlyBody } }, async (request, reply) => {
    const viewer = viewerOf(request, reply);
    if (!viewer) return reply;
    const { serverId, channelId } = request.params;
    await requireServerPermission(services, serverId, viewer.id, Permission.MANAGE_CHANNELS);
    try {
      await deleteChannel(services, serverId, channelId);
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) throw new PageError(404, 'Channel not found', 'This channel does not exist in this server.');
      throw error;
    }
    return reply.redirect(`/servers/${serverId}/settings/channels?done=channel-deleted`, 303);
  });

  // --- Roles ---

  pages.post('/servers/:serverId/roles', { schema: { ...hide, params: ServerParams, body: RoleBody } }, async (request, reply) => {
    const viewer = viewerOf(request, reply);
    if (!viewer) return reply;
    const { serverId } = request.params;
    const body = request.body;
    const permissions = await requireServerPermission(services, serverId, viewer.id, Permission.MANAGE_ROLES);
    try {
      const bits = permissionsFromNames(asList(body.permissions));
      if (bits === undefined) throw invalidField(['permissions'], 'PERMISSION_UNKNOWN', 'One of the chosen permissions does not exist.');
      const color = parseColor(body.color ?? '');
      if (color === undefined) throw invalidField(['color'], 'COLOR_INVALID', 'A colour is written like #5865f2, or left empty.');
      requireGrantable(permissions, bits);
      await createRole(services, serverId, { name: body.name ?? '', permissions: bits, color });
      return reply.redirect(`/servers/${serverId}/settings/roles?done=role-created`, 303);
    } catch (error) {
      return renderSettings(request, reply, serverId, permissions, 'roles', refused(error, 'create-role', { name: body.name, color: body.color, permissions: asList(body.permissions) }));
    }
  });

  pages.post('/servers/:serverId/roles/:roleId', { schema: { ...hide, params: ServerRoleParams, body: RoleBody } }, async (request, reply) => {
    const viewer = viewerOf(request, reply);
    if (!viewer) return reply;
    const { serverId, roleId } = request.params;
    const body = request.body;
    const permissions = await requireServerPermission(services, serverId, viewer.id, Permission.MANAGE_ROLES);
    const role = await roleOr404(serverId, roleId);
    try {
      requireRoleInReach(permissions, role);
      const bits = permissionsFromNames(asList(body.permissions));
      if (bits === undefined) throw invalidField(['permissions'], 'PERMISSION_UNKNOWN', 'One of the chosen permissions does not exist.');
      const color = body.color === undefined ? undefined : parseColor(body.color);
      if (color === undefined && body.color !== undefined) throw invalidField(['color'], 'COLOR_INVALID', 'A colour is written like #5865f2, or left empty.');
      requireGrantable(permissions, bits);
      await updateRole(services, serverId, roleId, {
        permissions: bits,
        ...(body.name !== undefined ? { name: body.name } : {}),
        ...(color !== undefined ? { color } : {}),
      });
      return reply.redirect(`/servers/${serverId}/settings/roles/${roleId}?done=role-saved`, 303);
    } catch (error) {
      return renderSettings(request, reply, serverId, permissions, 'role', { role, ...refused(error, 'edit-role', { name: body.name, color: body.color, permissions: asList(body.permissions) }) });
    }
  });

  pages.post('/servers/:serverId/roles/:roleId/delete', { schema: { ...hide, params: ServerRoleParams, body: CsrfOnlyBody } }, async (request, reply) => {
    const viewer = viewerOf(request, reply);
    if (!viewer) return reply;
    const { serverId, roleId } = request.params;
    const permissions = await requireServerPermission(services, serverId, viewer.id, Permission.MANAGE_ROLES);
    const role = await roleOr404(serverId, roleId);
    try {
      requireRoleInReach(permissions, role);
      await deleteRole(services, serverId, roleId);
      return reply.redirect(`/servers/${serverId}/settings/roles?done=role-deleted`, 303);
    } catch (error) {
      const r = refused(error, 'edit-role', {});
      return renderSettings(request, reply, serverId, permissions, 'role', { role, error: r.error, status: r.status });
    }
  });

  // --- Members ---

  /**
   * Every role given or taken away must be within the actor's reach (docs/permissions.md), and so
   * must every app-managed role the member holds (issue #21 §5): it cannot be changed by hand, so
   * without this a bot holding permissions the actor lacks could be edited anyway.
   */
  async function requireRoleChangesInReach(serverId: string, permissions: bigint, before: readonly string[], after: readonly string[]): Promise<void> {
    const changed = new Set([...before.filter((id) => !after.includes(id)), ...after.filter((id) => !before.includes(id))]);
    if (changed.size === 0) return;
    const roles = await getRoles(services, serverId);
    for (const role of roles) if (changed.has(role.id) || (role.managedApplicationId !== null && before.includes(role.id))) requireRoleInReach(permissions, role);
  }

  pages.post('/servers/:serverId/members', { schema: { ...hide, params: ServerParams, body: AddMemberBody } }, async (request, reply) => {
    const viewer = viewerOf(request, reply);
    if (!viewer) return reply;
    const { serverId } = request.params;
    const body = request.body;
    const roleIds = asList(body.roles);
    // docs/permissions.md: inviting by username is ours (Discord has no such action) and needs
    // Manage server; the person joins only by accepting (issue #21 §3).
    const permissions = await requireServerPermission(services, serverId, viewer.id, Permission.MANAGE_SERVER);
    try {
      if (roleIds.length > 0) {
        if ((permissions & Permission.MANAGE_ROLES) === 0n) throw new ApiError(403, 50013, 'Giving roles needs the Manage roles permission.');
        await requireRoleChangesInReach(serverId, permissions, [], roleIds);
      }
      await inviteMember(services, serverId, viewer.id, body.username ?? '', roleIds);
      return reply.redirect(`/servers/${serverId}/settings/members?done=invitation-sent`, 303);
    } catch (error) {
      return renderSettings(request, reply, serverId, permissions, 'members', refused(error, 'add-member', { username: body.username, roles: roleIds }));
    }
  });

  pages.post('/servers/:serverId/members/:userId/roles', { schema: { ...hide, params: ServerMemberParams, body: MemberRolesBody } }, async (request, reply) => {
    const viewer = viewerOf(request, reply);
    if (!viewer) return reply;
    const { serverId, userId } = request.params;
    const roleIds = asList(request.body.roles);
    const permissions = await requireServerPermission(services, serverId, viewer.id, Permission.MANAGE_ROLES);
    const member = await getMember(services, serverId, userId);
    if (!member) throw new PageError(404, 'Member not found', 'This person is not a member of this server.');
    try {
      await requireRoleChangesInReach(serverId, permissions, member.roleIds, roleIds);
      await setMemberRoles(services, serverId, userId, roleIds);
      return reply.redirect(`/servers/${serverId}/settings/members?done=roles-saved`, 303);
    } catch (error) {
      return renderSettings(request, reply, serverId, permissions, 'members', refused(error, `member-${userId}`, { roles: roleIds }));
    }
  });

  pages.post('/servers/:serverId/members/:userId/remove', { schema: { ...hide, params: ServerMemberParams, body: CsrfOnlyBody } }, async (request, reply) => {
    const viewer = viewerOf(request, reply);
    if (!viewer) return reply;
    const { serverId, userId } = request.params;
    const permissions = await requireAnyServerPermission(services, serverId, viewer.id, Permission.KICK_MEMBERS | Permission.MANAGE_SERVER);
    const target = await memberPermissions(services, serverId, userId);
    if (target === undefined) throw new PageError(404, 'Member not found', 'This person is not a member of this server.');
    try {
      requireMemberInReach(permissions, target);
      await removeMember(services, serverId, userId);
      return reply.redirect(`/servers/${serverId}/settings/members?done=member-removed`, 303);
    } catch (error) {
      return renderSettings(request, reply, serverId, permissions, 'members', refused(error, `member-${userId}`, {}));
    }
  });

  // --- Invites ---

  pages.post('/servers/:serverId/invites', { schema: { ...hide, params: ServerParams, body: InviteBody } }, async (request, reply) => {
    const viewer = viewerOf(request, reply);
    if (!viewer) return reply;
    const { serverId } = request.params;
    const permissions = await requireAnyServerPermission(services, serverId, viewer.id, SECTION_ACCESS.invites);
    try {
      const expiresInMs = parseInviteLifetime(request.body.expiresIn);
      if (expiresInMs === undefined) throw invalidField(['expiresIn'], 'BASE_TYPE_CHOICES', 'Choose one of the offered lifetimes.');
      const maxUses = parseInviteMaxUses(request.body.maxUses);
      if (maxUses === undefined) throw invalidField(['maxUses'], 'BASE_TYPE_CHOICES', 'Maximum uses is a number from 1 to 100, or no limit.');
      const created = await createInvite(services, serverId, viewer.id, { expiresInMs, maxUses });
      // Shown once, so this answers with the page rather than redirecting (a reload must not show it again).
      const createdInviteUrl = `${services.config.baseUrl.replace(/\/+$/, '')}/invite/${created.code}`;
      return renderSettings(request, reply, serverId, permissions, 'invites', { createdInviteUrl, status: 201 });
    } catch (error) {
      return renderSettings(request, reply, serverId, permissions, 'invites', refused(error, 'create-invite', {}));
    }
  });

  pages.post('/servers/:serverId/invites/:inviteId/delete', { schema: { ...hide, params: ServerInviteParams, body: CsrfOnlyBody } }, async (request, reply) => {
    const viewer = viewerOf(request, reply);
    if (!viewer) return reply;
    const { serverId, inviteId } = request.params;
    await requireServerPermission(services, serverId, viewer.id, Permission.MANAGE_SERVER);
    try {
      await deleteInvite(services, serverId, inviteId);
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) throw new PageError(404, 'Invite not found', 'This invite link does not exist in this server.');
      throw error;
    }
    return reply.redirect(`/servers/${serverId}/settings/invites?done=invite-revoked`, 303);
  });

  /** An invite that cannot be used is a page explaining why, with its status (404 unknown, 410 expired/used up). */
  async function inviteOrPage(code: string) {
    try {
      return await describeInvite(services, code);
    } catch (error) {
      if (error instanceof ApiError && error.status < 500) throw new PageError(error.status, 'Invite not valid', error.message);
      throw error;
    }
  }

  pages.get('/invite/:code', { schema: { ...hide, params: InviteParams } }, async (request, reply) => {
    const { code } = request.params;
    const { server } = await inviteOrPage(code);
    const alreadyMember = request.viewer ? (await getMember(services, server.id, request.viewer.id)) !== undefined : false;
    return sendHtml(reply, invitePage({ ctx: pageContext(request, services), code, server, alreadyMember }));
  });

  pages.post('/invite/:code', { schema: { ...hide, params: InviteParams, body: CsrfOnlyBody } }, async (request, reply) => {
    const viewer = viewerOf(request, reply);
    if (!viewer) return reply;
    const { code } = request.params;
    await inviteOrPage(code);
    try {
      const { server } = await acceptInvite(services, code, viewer.id);
      return reply.redirect(`/servers/${server.id}`, 303);
    } catch (error) {
      if (error instanceof ApiError && error.status < 500) throw new PageError(error.status, 'Invite not valid', error.message);
      throw error;
    }
  });
}

/** JSON API of the directory (none yet beyond what later modules add). */
export function registerDirectoryApi(_app: App, _services: Services): void {}
