import type { App } from '../../http/app-type.js';
import type { Services } from '../../services.js';

/** Sign up, sign in, sign out, profile settings (pages context: viewer + CSRF). */
export function registerAccountPages(_pages: App, _services: Services): void {}
