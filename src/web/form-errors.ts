import type { ApiError, ErrorTree, FieldError } from '../core/errors.js';

function firstFieldError(tree: ErrorTree): FieldError | undefined {
  for (const [key, value] of Object.entries(tree)) {
    if (key === '_errors' && Array.isArray(value)) return value[0];
    if (!Array.isArray(value)) {
      const found = firstFieldError(value);
      if (found) return found;
    }
  }
  return undefined;
}

/**
 * What a form shows when a service refuses its input: the first field message of a 50035, else
 * the error's own message. Services speak in API errors so the API, the CLI and pages share them.
 */
export function formErrorMessage(error: ApiError): string {
  return (error.errors && firstFieldError(error.errors)?.message) || error.message;
}
