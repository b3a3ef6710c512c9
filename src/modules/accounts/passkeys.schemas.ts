import { Type, type Static } from '@sinclair/typebox';

/**
 * Form bodies of the passkey forms (issue #38 §4). Optional strings, so a missing field reaches the
 * service and is refused beside the form; the browser's credential JSON is a few kilobytes at most.
 */
const field = Type.Optional(Type.String({ maxLength: 1024 }));
const credential = Type.Optional(Type.String({ maxLength: 16 * 1024 }));

export const PasskeyOptionsBody = Type.Object({ _csrf: field });
export type PasskeyOptionsBody = Static<typeof PasskeyOptionsBody>;

export const AddPasskeyBody = Type.Object({ name: field, credential, _csrf: field });
export type AddPasskeyBody = Static<typeof AddPasskeyBody>;

export const RemovePasskeyBody = Type.Object({ passkey: field, password: field, _csrf: field });
export type RemovePasskeyBody = Static<typeof RemovePasskeyBody>;

export const PasskeySignInBody = Type.Object({ credential, next: field, _csrf: field });
export type PasskeySignInBody = Static<typeof PasskeySignInBody>;
