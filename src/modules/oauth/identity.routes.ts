import type { App } from '../../http/app-type.js';
import type { Services } from '../../services.js';

/** GET /api/v1/oauth2/@me, /api/v1/users/@me, /api/v1/users/@me/servers (and /guilds). */
export function registerIdentityApi(_app: App, _services: Services): void {}
