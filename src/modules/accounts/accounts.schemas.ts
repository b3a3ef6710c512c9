import { Type, type Static } from '@sinclair/typebox';

/**
 * Form bodies of the account pages. Every field is an optional string here, so that a form with
 * a missing or empty field reaches the service, whose rules (people.ts) are reported beside the
 * field on the re-rendered form rather than as a bare 400 page. `_csrf` is checked by the pages
 * context before the handler runs.
 */
const field = Type.Optional(Type.String());

/** `login_hint`: OpenID Connect Core §3.1.2.1, the username to prefill (issue #22). */
export const NextQuery = Type.Object({ next: field, login_hint: field });

/** The sign-up page's query: where to go after, and an operator's sign-up link token (issue #39). */
export const RegisterQuery = Type.Object({ next: field, token: field });
export type RegisterQuery = Static<typeof RegisterQuery>;
export type NextQuery = Static<typeof NextQuery>;

/** `?saved=1` after a profile change (post/redirect/get). */
export const SavedQuery = Type.Object({ saved: field });
export type SavedQuery = Static<typeof SavedQuery>;

export const RegisterBody = Type.Object({ username: field, name: field, email: field, password: field, next: field, token: field, _csrf: field });
export type RegisterBody = Static<typeof RegisterBody>;

export const LoginBody = Type.Object({ username: field, password: field, next: field, _csrf: field });
export type LoginBody = Static<typeof LoginBody>;

export const ProfileBody = Type.Object({ name: field, email: field, avatarUrl: field, _csrf: field });
export type ProfileBody = Static<typeof ProfileBody>;

export const PasswordBody = Type.Object({ currentPassword: field, newPassword: field, confirmPassword: field, _csrf: field });
export type PasswordBody = Static<typeof PasswordBody>;

export const CsrfOnlyBody = Type.Object({ _csrf: field });
export type CsrfOnlyBody = Static<typeof CsrfOnlyBody>;

/** Issue #38 §2–§3: the token of a verification or reset link. */
export const TokenQuery = Type.Object({ token: field });
export type TokenQuery = Static<typeof TokenQuery>;

export const TokenBody = Type.Object({ token: field, _csrf: field });
export type TokenBody = Static<typeof TokenBody>;

export const ForgotPasswordBody = Type.Object({ email: field, _csrf: field });
export type ForgotPasswordBody = Static<typeof ForgotPasswordBody>;

export const ResetPasswordBody = Type.Object({ token: field, newPassword: field, confirmPassword: field, _csrf: field });
export type ResetPasswordBody = Static<typeof ResetPasswordBody>;
