import type { App } from '../../http/app-type.js';
import type { Services } from '../../services.js';

/** JSON API of applications (bots and commands arrive with the bot issue). */
export function registerApplicationApi(_app: App, _services: Services): void {}

/** The developer portal under /developers (pages context: viewer + CSRF). */
export function registerApplicationPages(_pages: App, _services: Services): void {}
