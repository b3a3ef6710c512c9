/**
 * Constants of the Slack- and GitHub-compatible execute routes (issue #23) shared by their
 * service, routes and the Integrations pages. Pure.
 */

/** The longest GitHub secret kept (GitHub sets no practical limit; this keeps rows small). */
export const GITHUB_SECRET_MAX = 256;

/** The header carrying why a GitHub delivery posted nothing (GitHub shows response headers in its delivery log). */
export const NOT_POSTED_HEADER = 'x-gatehouse-not-posted';
