import { Type, type Static } from '@sinclair/typebox';

export const ChannelParams = Type.Object({ channelId: Type.String() });
export type ChannelParams = Static<typeof ChannelParams>;

/** Optional so an empty form reaches the service and gets its message (50006) beside the form. */
export const PostMessageBody = Type.Object({ content: Type.Optional(Type.String()), _csrf: Type.Optional(Type.String()) });
export type PostMessageBody = Static<typeof PostMessageBody>;

/** `?before=<message id>`: a page of older history (checked as a snowflake by the service). */
export const ChannelQuery = Type.Object({ before: Type.Optional(Type.String({ maxLength: 64 })) });
export type ChannelQuery = Static<typeof ChannelQuery>;

/** POST /channels/:channelId/read (history.js): the newest message the page has shown. */
// Optional like every page form's fields, so CSRF is judged (403) before the body (docs/architecture.md §Exceptions).
export const ReadChannelBody = Type.Object({ messageId: Type.Optional(Type.String({ maxLength: 64 })), _csrf: Type.Optional(Type.String()) });
export type ReadChannelBody = Static<typeof ReadChannelBody>;
