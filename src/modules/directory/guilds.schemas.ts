import { Type } from '@sinclair/typebox';

/** Path parameters of the bot read routes (issue #40 §4); services check the ids (10004, 10007, 10013). */

export const GuildIdParams = Type.Object({ guildId: Type.String({ description: 'Server (guild) id' }) });

export const GuildMemberParams = Type.Object({
  guildId: Type.String({ description: 'Server (guild) id' }),
  userId: Type.String({ description: 'User id of the member' }),
});

export const UserIdParams = Type.Object({ userId: Type.String({ description: 'User id (a person or a bot account)' }) });
