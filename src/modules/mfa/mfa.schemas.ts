import { Type, type Static } from '@sinclair/typebox';

/** Form bodies of the second-factor pages: optional strings, so a missing field reaches the service's message. */
const field = Type.Optional(Type.String());

export const SecondStepBody = Type.Object({ code: field, next: field, _csrf: field });
export type SecondStepBody = Static<typeof SecondStepBody>;

export const CodeBody = Type.Object({ code: field, _csrf: field });
export type CodeBody = Static<typeof CodeBody>;

export const ReauthenticateBody = Type.Object({ password: field, code: field, _csrf: field });
export type ReauthenticateBody = Static<typeof ReauthenticateBody>;
