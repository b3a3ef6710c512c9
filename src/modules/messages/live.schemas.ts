import { Type, type Static } from '@sinclair/typebox';

export const LiveParams = Type.Object({ channelId: Type.String() });
export type LiveParams = Static<typeof LiveParams>;

/** `after`: the newest message id the page shows; what came later is sent first. Anything else is ignored. */
export const LiveQuery = Type.Object({ after: Type.Optional(Type.String()) });
export type LiveQuery = Static<typeof LiveQuery>;
