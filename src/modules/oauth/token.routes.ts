import type { App } from '../../http/app-type.js';
import type { Services } from '../../services.js';

/** POST /api/oauth2/token, /api/oauth2/token/revoke (and /api/v1 aliases), RFC 8414 metadata. */
export function registerTokenApi(_app: App, _services: Services): void {}
