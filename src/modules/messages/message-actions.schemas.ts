import { Type, type Static } from '@sinclair/typebox';

export const MessageParams = Type.Object({ channelId: Type.String(), messageId: Type.String() });
export type MessageParams = Static<typeof MessageParams>;

/** Optional so an empty edit reaches the service and gets its message (50006) beside the form. */
export const EditMessageBody = Type.Object({ content: Type.Optional(Type.String()), _csrf: Type.Optional(Type.String()) });
export type EditMessageBody = Static<typeof EditMessageBody>;

export const DeleteMessageBody = Type.Object({ _csrf: Type.Optional(Type.String()) });
