import type { App } from '../../http/app-type.js';
import type { Services } from '../../services.js';

/** GET/POST /app/oauth2/authorize and Settings → Authorized apps. */
export function registerAuthorizePages(_pages: App, _services: Services): void {}
