import type { App } from '../../http/app-type.js';
import type { Services } from '../../services.js';

/** Token, revoke, identity endpoints and RFC 8414 metadata. */
export function registerOAuthApi(_app: App, _services: Services): void {}

/** GET /app/oauth2/authorize, the consent form, and Settings → Authorized apps (pages context). */
export function registerOAuthPages(_pages: App, _services: Services): void {}
