import { Type, type Static } from '@sinclair/typebox';

/**
 * Form bodies and queries of Settings → Sessions. Optional strings, so a missing field reaches the
 * service and is refused beside the list rather than as a bare 400 page (as accounts.schemas.ts).
 */
const field = Type.Optional(Type.String());

export const EndSessionBody = Type.Object({ session: field, _csrf: field });
export type EndSessionBody = Static<typeof EndSessionBody>;

export const SessionsCsrfBody = Type.Object({ _csrf: field });
export type SessionsCsrfBody = Static<typeof SessionsCsrfBody>;

/** `?ended=N` after ending sessions (post/redirect/get). */
export const SessionsQuery = Type.Object({ ended: field });
export type SessionsQuery = Static<typeof SessionsQuery>;

/**
 * Settings → Account → Delete account: the password, and with a second factor a current code or a
 * passkey assertion (`credential`, the browser's JSON, a few kilobytes), to re-authenticate (issue #38 §5).
 */
export const DeleteAccountBody = Type.Object({ password: field, code: field, credential: Type.Optional(Type.String({ maxLength: 16 * 1024 })), username: field, _csrf: field });
export type DeleteAccountBody = Static<typeof DeleteAccountBody>;
