import type { App } from '../../http/app-type.js';
import type { Services } from '../../deps.js';
import { registerAuthorizePages } from './authorize.routes.js';
import { registerActivatePages, registerDeviceAuthorizationApi } from './device.routes.js';
import { registerIdentityApi } from './identity.routes.js';
import { registerTokenApi } from './token.routes.js';

/** Token, revoke, identity endpoints and RFC 8414 metadata. */
export function registerOAuthApi(app: App, services: Services): void {
  registerTokenApi(app, services);
  registerDeviceAuthorizationApi(app, services);
  registerIdentityApi(app, services);
}

/** GET /app/oauth2/authorize, the consent form, and Settings → Authorized apps (pages context). */
export function registerOAuthPages(pages: App, services: Services): void {
  registerAuthorizePages(pages, services);
  registerActivatePages(pages, services);
}
