import { Type } from '@sinclair/typebox';

/** Path parameters of the bot read routes (issue #40 §4); services check the ids (10004, 10007, 10013). */

export const GuildIdParams = Type.Object({ guildId: Type.String({ description: 'Server (guild) id' }) });

export const GuildMemberParams = Type.Object({
  guildId: Type.String({ description: 'Server (guild) id' }),
  userId: Type.String({ description: 'User id of the member' }),
});

export const UserIdParams = Type.Object({ userId: Type.String({ description: 'User id (a person or a bot account)' }) });

/**
 * Discord's POST /guilds/{id}/mfa body and answer: the server's MFA level, 0 (none) or 1 (moderators
 * need a second factor). Any integer passes here so that another value is refused by the service
 * with Discord's 50035 at `level`.
 */
export const GuildMfaLevelBody = Type.Object({ level: Type.Integer({ description: '0: none; 1: members with moderator permissions need two-factor authentication' }) });

export const GuildMfaLevelAnswer = Type.Object({ level: Type.Integer({ description: 'The MFA level now in force' }) });

/**
 * Discord's PATCH /guilds/{id} body as far as Gatehouse takes it (issue #39): `owner_id`, the
 * member to transfer the server to. Discord's other fields are not changed through this route
 * (Server settings does); unknown keys are ignored (DESIGN §1).
 */
export const ModifyGuildBody = Type.Object({
  owner_id: Type.Optional(Type.String({ maxLength: 32, description: 'The member to make the owner (only the owner may)' })),
  icon: Type.Optional(Type.Union([Type.Null(), Type.String()], { description: 'Image data to upload (`data:image/png;base64,…`: PNG, JPEG, GIF or WebP, at most 10 MiB), or null to remove the icon. Needs Manage server' })),
});
