import { DAY } from '../../core/clock.js';

/**
 * Constants of the Slack- and GitHub-compatible execute routes (issue #23) shared by their
 * service, routes and the Integrations pages, and the maintenance job. Pure.
 */

/** The longest GitHub secret kept (GitHub sets no practical limit; this keeps rows small). */
export const GITHUB_SECRET_MAX = 256;

/** The header carrying why a GitHub delivery posted nothing (GitHub shows response headers in its delivery log). */
export const NOT_POSTED_HEADER = 'x-gatehouse-not-posted';

/**
 * Issue #36 §2: how long a signed delivery is remembered, so that the same delivery id or the same
 * signed body posts nothing a second time. GitHub's "Redeliver" reaches back 3 days; a week covers
 * that with room, and a row per delivery for a week is small (storage/maintenance.ts prunes).
 */
export const GITHUB_REPLAY_WINDOW_MS = 7 * DAY;
