import type { ApiError } from '../core/errors.js';

/**
 * What a page says when a service refuses with an API error (DESIGN §2: services speak API
 * errors only, for the API, the CLI and pages alike; this is the one place pages translate them).
 * A non-member is told the same as for a server that does not exist, so a server's existence does
 * not leak (docs/permissions.md).
 */
export interface PageWords {
  title: string;
  detail: string;
}

export const SERVER_NOT_FOUND: PageWords = { title: 'Server not found', detail: 'This server does not exist, or you are not a member of it.' };
export const CHANNEL_NOT_FOUND: PageWords = { title: 'Channel not found', detail: 'This channel does not exist, or you are not a member of its server.' };

/** By Discord error code (DESIGN §1); the detail is the error's own message unless given here. */
const BY_CODE: Record<number, { title: string; detail?: string }> = {
  10002: { title: 'Application not found', detail: 'There is no application at this address, or it belongs to someone else.' },
  10003: CHANNEL_NOT_FOUND,
  10004: SERVER_NOT_FOUND,
  10006: { title: 'Invite not valid' },
  10007: { title: 'Member not found', detail: 'This person is not a member of this server.' },
  10011: { title: 'Role not found', detail: 'This role does not exist in this server.' },
  10015: { title: 'Webhook not found', detail: 'This webhook does not exist here, or it was deleted.' },
  50001: { title: 'Missing permission' },
  50013: { title: 'Missing permission' },
};

export function pageErrorFor(error: ApiError): PageWords {
  const words = BY_CODE[error.code];
  if (words) return { title: words.title, detail: words.detail ?? error.message };
  return { title: 'Something is not right', detail: error.message };
}
