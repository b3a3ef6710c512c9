/**
 * Issue #39: what a disabled person is told when they try to sign in, reset their password or use
 * a passkey. It says that the operator disabled the account and whom to ask, never the operator's
 * reason (that may be an internal note, and it is the operator's to share).
 */
export function disabledAccountMessage(serviceName: string): string {
  return `This account has been disabled by the operator of ${serviceName}. Contact them if you think this is a mistake.`;
}

/** The field error code of that refusal (Discord's form-error shape, docs/errors.md). */
export const ACCOUNT_DISABLED_CODE = 'ACCOUNT_DISABLED';

/** The errors tree of a refusal, read as the one error handler renders it (`{ field: { _errors: [{ code }] } }`). */
export function isAccountDisabledRefusal(errors: unknown): boolean {
  if (typeof errors !== 'object' || errors === null) return false;
  return Object.values(errors).some((field: unknown) => {
    const list = typeof field === 'object' && field !== null ? (field as { _errors?: unknown })._errors : undefined;
    return Array.isArray(list) && list.some((e: unknown) => typeof e === 'object' && e !== null && (e as { code?: unknown }).code === ACCOUNT_DISABLED_CODE);
  });
}
