import { Type, type Static } from '@sinclair/typebox';

/**
 * Form bodies and parameters of the directory pages. Fields are optional strings (checkbox
 * groups: arrays, which AJV's coerceTypes 'array' also makes of a single value) so that missing
 * or bad values reach the services, whose rules come back beside the form, not as a bare 400.
 * Ids are plain strings: one that is not a snowflake is simply "not found".
 */
const field = Type.Optional(Type.String());
const list = Type.Optional(Type.Array(Type.String()));

export const ServerParams = Type.Object({ serverId: Type.String() });
export type ServerParams = Static<typeof ServerParams>;

export const SettingsSectionParams = Type.Object({ serverId: Type.String(), section: Type.String() });
export type SettingsSectionParams = Static<typeof SettingsSectionParams>;

export const ServerChannelParams = Type.Object({ serverId: Type.String(), channelId: Type.String() });
export type ServerChannelParams = Static<typeof ServerChannelParams>;

export const ServerRoleParams = Type.Object({ serverId: Type.String(), roleId: Type.String() });
export type ServerRoleParams = Static<typeof ServerRoleParams>;

export const ServerMemberParams = Type.Object({ serverId: Type.String(), userId: Type.String() });
export type ServerMemberParams = Static<typeof ServerMemberParams>;

export const ServerInviteParams = Type.Object({ serverId: Type.String(), inviteId: Type.String() });
export type ServerInviteParams = Static<typeof ServerInviteParams>;

export const InvitationParams = Type.Object({ invitationId: Type.String() });
export type InvitationParams = Static<typeof InvitationParams>;

export const ServerInvitationParams = Type.Object({ serverId: Type.String(), invitationId: Type.String() });
export type ServerInvitationParams = Static<typeof ServerInvitationParams>;

export const InviteParams = Type.Object({ code: Type.String() });
export type InviteParams = Static<typeof InviteParams>;

/** `?done=…` after a change (post/redirect/get): which confirmation to show. */
export const DoneQuery = Type.Object({ done: field });
export type DoneQuery = Static<typeof DoneQuery>;

export const NameBody = Type.Object({ name: field, _csrf: field });

/** Server settings → Overview: name and icon URL (issue #24). */
export const ServerProfileBody = Type.Object({ name: field, iconUrl: field, _csrf: field });
/** Server settings → Overview: the MFA level, "0" or "1" (issue #38 §4). */
export const MfaLevelBody = Type.Object({ level: field, _csrf: field });
export type NameBody = Static<typeof NameBody>;

export const ChannelBody = Type.Object({ name: field, topic: field, _csrf: field });

/** Channel settings → move one place (issue #24). */
// `direction` is read by the route (up or down), so a form without a CSRF token is refused (403) before its fields are.
export const ChannelMoveBody = Type.Object({ direction: field, _csrf: field });
export type ChannelBody = Static<typeof ChannelBody>;

export const RoleBody = Type.Object({ name: field, color: field, permissions: list, _csrf: field });
export type RoleBody = Static<typeof RoleBody>;

export const AddMemberBody = Type.Object({ username: field, roles: list, _csrf: field });
export type AddMemberBody = Static<typeof AddMemberBody>;

export const MemberRolesBody = Type.Object({ roles: list, _csrf: field });
export type MemberRolesBody = Static<typeof MemberRolesBody>;

export const InviteBody = Type.Object({ expiresIn: field, maxUses: field, _csrf: field });
export type InviteBody = Static<typeof InviteBody>;

export const CsrfOnlyBody = Type.Object({ _csrf: field });
export type CsrfOnlyBody = Static<typeof CsrfOnlyBody>;

/** Server settings → Danger zone → Transfer ownership (issue #39): the chosen member and the acknowledgement. */
export const TransferOwnershipBody = Type.Object({ owner_id: field, acknowledge: field, _csrf: field });
