import type { App } from '../../http/app-type.js';
import type { Services } from '../../services.js';

/** The channel view and posting plain-text messages (pages context: viewer + CSRF). */
export function registerMessagePages(_pages: App, _services: Services): void {}
