import type { FastifyReply, FastifyRequest } from 'fastify';
import { PageError, invalidField } from '../../core/errors.js';
import type { App } from '../../http/app-type.js';
import { personActing } from '../../http/acting.js';
import { actorOf, pageContext, sendHtml, signedInPages } from '../../http/pages.js';
import type { Services } from '../../deps.js';
import { refused, type FormError, type FormValues } from '../../web/components.js';
import { createChannel, deleteChannel, moveChannel, updateChannel } from './channels.service.js';
import { registerDangerPages } from './danger.routes.js';
import {
  AddMemberBody,
  ChannelBody,
  ChannelMoveBody,
  CsrfOnlyBody,
  DoneQuery,
  InviteBody,
  MemberRolesBody,
  ServerProfileBody,
  MfaLevelBody,
  RoleBody,
  ServerChannelParams,
  ServerInvitationParams,
  ServerInviteParams,
  ServerMemberParams,
  ServerParams,
  ServerRoleParams,
  SettingsSectionParams,
} from './directory.schemas.js';
import { parseInviteLifetime, parseInviteMaxUses } from './invites.js';
import { createInvite, deleteInvite } from './invites.service.js';
import { cancelInvitation } from './invitations.service.js';
import { inviteMember, removeMember, setMemberRoles } from './members.service.js';
import { parseColor, permissionsFromNames } from './roles.js';
import { createRole, deleteRole, updateRole } from './roles.service.js';
import { isSection, settingsAbilities, type SettingsSection } from './server-settings.js';
import { settingsPage } from './server-settings.page.js';
import { setServerMfaLevel, updateServerProfile } from './servers.service.js';
import { settingsView } from './settings.service.js';
import { holdOnce, takeOnce } from '../reveals/reveals.service.js';

/** Page routes are HTML, not API: kept out of the OpenAPI document. */
const hide = { hide: true } as const;

/** Confirmations shown after post/redirect/get, by `?done=` key. */
const NOTICES: Record<string, string> = {
  renamed: 'Server settings saved.',
  'icon-saved': 'Server icon saved.',
  'mfa-level': 'The two-factor requirement for moderators was saved.',
  'channel-created': 'Channel created.',
  'channel-deleted': 'Channel deleted.',
  'channel-saved': 'Channel saved.',
  'role-created': 'Role created.',
  'role-saved': 'Role saved.',
  'role-deleted': 'Role deleted.',
  // The same words whether or not the username exists (issue #21 §3: the form is no username oracle).
  'invitation-sent': 'Invitation sent. If that username belongs to someone, they see it on their home page and become a member once they accept it.',
  'roles-saved': 'Roles saved.',
  'member-removed': 'Member removed.',
  'invite-revoked': 'Invite link revoked.',
  'invite-created': 'Invite link created.',
  'invitation-cancelled': 'Invitation cancelled.',
};

export interface SettingsExtra {
  roleId?: string;
  error?: FormError;
  values?: FormValues;
  notice?: string | undefined;
  createdInviteUrl?: string;
  status?: number;
}

/** Where a settings form is: its section (shown again on refusal) and the form's name. */
interface FormAt {
  serverId: string;
  section: SettingsSection;
  form: string;
  roleId?: string;
  values?: FormValues;
}

function asList(value: string[] | undefined): string[] {
  return value ?? [];
}

/** A role form's permissions and colour (400 at the field when unreadable); `color` undefined when not sent. */
function roleFields(body: { color?: string | undefined; permissions?: string[] | undefined }, colorRequired: boolean): { permissions: bigint; color: number | undefined } {
  const permissions = permissionsFromNames(asList(body.permissions));
  if (permissions === undefined) throw invalidField(['permissions'], 'PERMISSION_UNKNOWN', 'One of the chosen permissions does not exist.');
  const color = body.color === undefined && !colorRequired ? undefined : parseColor(body.color ?? '');
  if (color === undefined && (colorRequired || body.color !== undefined)) throw invalidField(['color'], 'COLOR_INVALID', 'A colour is written like #5865f2, or left empty.');
  return { permissions, color };
}

/** An invite's link, `{base_url}/invite/<code>` (docs/permissions.md, "Invite links"). */
function inviteUrl(services: Services, code: string): string {
  return `${services.config.baseUrl.replace(/\/+$/, '')}/invite/${code}`;
}

/** One settings section as the viewer may see it (the service checks their access to it). Also the icon form's (resources/image-upload.routes.ts). */
export async function render(services: Services, request: FastifyRequest, reply: FastifyReply, serverId: string, section: SettingsSection, extra: SettingsExtra = {}) {
  const view = await settingsView(services, actorOf(request), serverId, section, extra.roleId);
  const { data, permissions } = view;
  const names = new Map(data.members.map((m) => [m.userId, m.person.name]));
  const { roleId: _roleId, status = 200, ...shown } = extra;
  const markup = settingsPage({
    ctx: pageContext(request, services),
    section,
    server: data.server,
    permissions,
    can: settingsAbilities(permissions),
    channels: data.channels,
    roles: data.roles,
    members: data.members,
    // Links are shown only to those who see the list (Manage server, docs/permissions.md).
    invites: data.invites.map((i) => ({ ...i, creatorName: names.get(i.creatorId) ?? 'a former member', url: i.code !== null && settingsAbilities(permissions).manageServer ? inviteUrl(services, i.code) : null })),
    // Issue #36 §3: listed with their senders to those who see the links (Manage server).
    invitations: settingsAbilities(permissions).manageServer ? data.invitations : [],
    pendingInvitations: view.pendingInvitations,
    now: services.clock.now(),
    ...(view.role ? { role: view.role } : {}),
    ...shown,
  });
  return sendHtml(reply, markup, status);
}

function done(query: { done?: string | undefined }): { notice: string | undefined } {
  return { notice: NOTICES[query.done ?? ''] };
}

/**
 * A settings form: the service call, then post/redirect/get to `doneUrl`; a refusal shows the
 * section again with the message beside `form` and, when given, what was typed (`values`).
 */
async function submit(services: Services, request: FastifyRequest, reply: FastifyReply, at: FormAt, act: () => Promise<unknown>, doneUrl: string) {
  try {
    await act();
    return reply.redirect(doneUrl, 303);
  } catch (error) {
    const { values, ...refusal } = refused(error, at.form, at.values);
    return render(services, request, reply, at.serverId, at.section, { ...(at.roleId ? { roleId: at.roleId } : {}), ...refusal, ...(at.values ? { values } : {}) });
  }
}

/** Server settings: one section per page (channels, roles, members, invites), and the forms that change them. */
export function registerServerSettingsPages(pages: App, services: Services): void {
  const show = (request: FastifyRequest, reply: FastifyReply, serverId: string, section: SettingsSection, extra?: SettingsExtra) => render(services, request, reply, serverId, section, extra);
  const form = (request: FastifyRequest, reply: FastifyReply, at: FormAt, act: () => Promise<unknown>, doneUrl: string) => submit(services, request, reply, at, act, doneUrl);

  signedInPages(pages, (scope) => {
    registerDangerPages(scope, services);

    scope.get('/servers/:serverId/settings', { schema: { ...hide, params: ServerParams, querystring: DoneQuery } }, async (request, reply) =>
      show(request, reply, request.params.serverId, 'overview', done(request.query)),
    );

    scope.get('/servers/:serverId/settings/:section', { schema: { ...hide, params: SettingsSectionParams, querystring: DoneQuery } }, async (request, reply) => {
      const { serverId, section } = request.params;
      if (!isSection(section)) throw new PageError(404, 'Page not found', 'There is nothing at this address.');
      // The link made by the create form, once (reveals.service.ts): a reload no longer shows it.
      const createdInviteUrl = section === 'invites' ? await takeOnce<string>(services, request.sessionToken, `invite:${serverId}`) : undefined;
      return show(request, reply, serverId, section, { ...done(request.query), ...(createdInviteUrl ? { createdInviteUrl } : {}) });
    });

    scope.get('/servers/:serverId/settings/roles/:roleId', { schema: { ...hide, params: ServerRoleParams, querystring: DoneQuery } }, async (request, reply) =>
      show(request, reply, request.params.serverId, 'role', { roleId: request.params.roleId, ...done(request.query) }),
    );

    scope.post('/servers/:serverId/settings', { schema: { ...hide, params: ServerParams, body: ServerProfileBody } }, async (request, reply) => {
      const { serverId } = request.params;
      const { name, iconUrl } = request.body;
      const at: FormAt = { serverId, section: 'overview', form: 'rename', values: { name, iconUrl } };
      const save = () => updateServerProfile(services, personActing(request, services.clock), serverId, { name: name ?? '', iconUrl: iconUrl ?? '' });
      return form(request, reply, at, save, `/servers/${serverId}/settings?done=renamed`);
    });

    scope.post('/servers/:serverId/settings/mfa-level', { schema: { ...hide, params: ServerParams, body: MfaLevelBody } }, async (request, reply) => {
      const { serverId } = request.params;
      const at: FormAt = { serverId, section: 'overview', form: 'mfa-level' };
      const save = () => setServerMfaLevel(services, personActing(request, services.clock), serverId, request.body.level ?? '');
      return form(request, reply, at, save, `/servers/${serverId}/settings?done=mfa-level`);
    });

    scope.post('/servers/:serverId/channels', { schema: { ...hide, params: ServerParams, body: ChannelBody } }, async (request, reply) => {
      const { serverId } = request.params;
      const { name, topic } = request.body;
      const at: FormAt = { serverId, section: 'channels', form: 'create-channel', values: { name, topic } };
      return form(request, reply, at, () => createChannel(services, personActing(request, services.clock), serverId, { name: name ?? '', topic: topic ?? null }), `/servers/${serverId}/settings/channels?done=channel-created`);
    });

    scope.post('/servers/:serverId/channels/:channelId', { schema: { ...hide, params: ServerChannelParams, body: ChannelBody } }, async (request, reply) => {
      const { serverId, channelId } = request.params;
      const { name, topic } = request.body;
      const at: FormAt = { serverId, section: 'channels', form: `channel-${channelId}`, values: { name, topic } };
      const save = () => updateChannel(services, personActing(request, services.clock), serverId, channelId, { name: name ?? '', topic: topic ?? null });
      return form(request, reply, at, save, `/servers/${serverId}/settings/channels?done=channel-saved#channel-${channelId}`);
    });

    scope.post('/servers/:serverId/channels/:channelId/move', { schema: { ...hide, params: ServerChannelParams, body: ChannelMoveBody } }, async (request, reply) => {
      const { serverId, channelId } = request.params;
      const direction = request.body.direction;
      if (direction !== 'up' && direction !== 'down') throw invalidField(['direction'], 'BASE_TYPE_CHOICES', 'A channel moves up or down.');
      await moveChannel(services, personActing(request, services.clock), serverId, channelId, direction);
      return reply.redirect(`/servers/${serverId}/settings/channels#channel-${channelId}`, 303);
    });

    scope.post('/servers/:serverId/channels/:channelId/delete', { schema: { ...hide, params: ServerChannelParams, body: CsrfOnlyBody } }, async (request, reply) => {
      const { serverId, channelId } = request.params;
      await deleteChannel(services, personActing(request, services.clock), serverId, channelId);
      return reply.redirect(`/servers/${serverId}/settings/channels?done=channel-deleted`, 303);
    });

    scope.post('/servers/:serverId/roles', { schema: { ...hide, params: ServerParams, body: RoleBody } }, async (request, reply) => {
      const { serverId } = request.params;
      const body = request.body;
      const at: FormAt = { serverId, section: 'roles', form: 'create-role', values: { name: body.name, color: body.color, permissions: asList(body.permissions) } };
      return form(
        request,
        reply,
        at,
        async () => {
          const { permissions, color } = roleFields(body, true);
          return createRole(services, personActing(request, services.clock), serverId, { name: body.name ?? '', permissions, ...(color !== undefined ? { color } : {}) });
        },
        `/servers/${serverId}/settings/roles?done=role-created`,
      );
    });

    scope.post('/servers/:serverId/roles/:roleId', { schema: { ...hide, params: ServerRoleParams, body: RoleBody } }, async (request, reply) => {
      const { serverId, roleId } = request.params;
      const body = request.body;
      const at: FormAt = { serverId, section: 'role', roleId, form: 'edit-role', values: { name: body.name, color: body.color, permissions: asList(body.permissions) } };
      return form(
        request,
        reply,
        at,
        async () => {
          const { permissions, color } = roleFields(body, false);
          const changes = { permissions, ...(body.name !== undefined ? { name: body.name } : {}), ...(color !== undefined ? { color } : {}) };
          return updateRole(services, personActing(request, services.clock), serverId, roleId, changes);
        },
        `/servers/${serverId}/settings/roles/${roleId}?done=role-saved`,
      );
    });

    scope.post('/servers/:serverId/roles/:roleId/delete', { schema: { ...hide, params: ServerRoleParams, body: CsrfOnlyBody } }, async (request, reply) => {
      const { serverId, roleId } = request.params;
      const at: FormAt = { serverId, section: 'role', roleId, form: 'edit-role' };
      return form(request, reply, at, () => deleteRole(services, personActing(request, services.clock), serverId, roleId), `/servers/${serverId}/settings/roles?done=role-deleted`);
    });

    scope.post('/servers/:serverId/members', { schema: { ...hide, params: ServerParams, body: AddMemberBody } }, async (request, reply) => {
      const { serverId } = request.params;
      const roleIds = asList(request.body.roles);
      const at: FormAt = { serverId, section: 'members', form: 'add-member', values: { username: request.body.username, roles: roleIds } };
      const invite = () => inviteMember(services, personActing(request, services.clock), serverId, request.body.username ?? '', roleIds);
      return form(request, reply, at, invite, `/servers/${serverId}/settings/members?done=invitation-sent`);
    });

    scope.post('/servers/:serverId/members/:userId/roles', { schema: { ...hide, params: ServerMemberParams, body: MemberRolesBody } }, async (request, reply) => {
      const { serverId, userId } = request.params;
      const roleIds = asList(request.body.roles);
      const at: FormAt = { serverId, section: 'members', form: `member-${userId}`, values: { roles: roleIds } };
      return form(request, reply, at, () => setMemberRoles(services, personActing(request, services.clock), serverId, userId, roleIds), `/servers/${serverId}/settings/members?done=roles-saved`);
    });

    scope.post('/servers/:serverId/members/:userId/remove', { schema: { ...hide, params: ServerMemberParams, body: CsrfOnlyBody } }, async (request, reply) => {
      const { serverId, userId } = request.params;
      const at: FormAt = { serverId, section: 'members', form: `member-${userId}`, values: {} };
      return form(request, reply, at, () => removeMember(services, personActing(request, services.clock), serverId, userId), `/servers/${serverId}/settings/members?done=member-removed`);
    });

    scope.post('/servers/:serverId/invites', { schema: { ...hide, params: ServerParams, body: InviteBody } }, async (request, reply) => {
      const { serverId } = request.params;
      try {
        const expiresInMs = parseInviteLifetime(request.body.expiresIn);
        if (expiresInMs === undefined) throw invalidField(['expiresIn'], 'BASE_TYPE_CHOICES', 'Choose one of the offered lifetimes.');
        const maxUses = parseInviteMaxUses(request.body.maxUses);
        if (maxUses === undefined) throw invalidField(['maxUses'], 'BASE_TYPE_CHOICES', 'Maximum uses is a number from 1 to 100, or no limit.');
        const created = await createInvite(services, personActing(request, services.clock), serverId, { expiresInMs, maxUses });
        // Post/redirect/get: the link waits for the one GET that shows it (a reload creates nothing).
        await holdOnce(services, request.sessionToken ?? '', `invite:${serverId}`, inviteUrl(services, created.code));
        return reply.redirect(`/servers/${serverId}/settings/invites?done=invite-created`, 303);
      } catch (error) {
        return show(request, reply, serverId, 'invites', refused(error, 'create-invite'));
      }
    });

    scope.post('/servers/:serverId/invites/:inviteId/delete', { schema: { ...hide, params: ServerInviteParams, body: CsrfOnlyBody } }, async (request, reply) => {
      const { serverId, inviteId } = request.params;
      await deleteInvite(services, personActing(request, services.clock), serverId, inviteId);
      return reply.redirect(`/servers/${serverId}/settings/invites?done=invite-revoked`, 303);
    });

    // Issue #36 §3: its sender or anyone with Manage server withdraws a pending invitation.
    scope.post('/servers/:serverId/invitations/:invitationId/cancel', { schema: { ...hide, params: ServerInvitationParams, body: CsrfOnlyBody } }, async (request, reply) => {
      const { serverId, invitationId } = request.params;
      await cancelInvitation(services, personActing(request, services.clock), serverId, invitationId);
      return reply.redirect(`/servers/${serverId}/settings/invites?done=invitation-cancelled`, 303);
    });
  });
}
