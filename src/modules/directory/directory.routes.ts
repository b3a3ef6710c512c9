import type { App } from '../../http/app-type.js';
import type { Services } from '../../services.js';

/** JSON API of the directory (none yet beyond what later modules add). */
export function registerDirectoryApi(_app: App, _services: Services): void {}

/** Home, servers, channels, roles, members, invites (pages context: viewer + CSRF). */
export function registerDirectoryPages(_pages: App, _services: Services): void {}
