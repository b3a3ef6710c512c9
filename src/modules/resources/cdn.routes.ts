import { Type } from '@sinclair/typebox';
import { PageError } from '../../core/errors.js';
import type { App } from '../../http/app-type.js';
import type { Services } from '../../deps.js';
import { resolveImage, type ImageKind } from './cdn.service.js';

const Params = Type.Object({ id: Type.String(), file: Type.String() });
// Discord's CDN file names: {hash}.{png|jpg|jpeg|webp|gif}; libraries add ?size=….
const FILE = /^([0-9a-f]{32})\.(?:png|jpe?g|webp|gif)$/;

/**
 * DESIGN §1: Discord's CDN paths on {base_url}, so a library whose CDN base is set to Gatehouse
 * builds working image URLs from `avatar` / `icon` hashes: `/avatars/{user_or_webhook_id}/{hash}.png`
 * (discord.py and discord.js build webhook avatars there too), `/icons/{server_id}/{hash}.png`,
 * `/app-icons/{application_id}/{hash}.png`. Each redirects to the stored https URL; Gatehouse
 * stores no image bytes. A hash names one URL for good, so the redirect may be cached.
 */
export function registerCdnRoutes(app: App, services: Services): void {
  for (const kind of ['avatars', 'icons', 'app-icons'] as const satisfies readonly ImageKind[]) {
    app.get(`/${kind}/:id/:file`, { schema: { hide: true, params: Params } }, async (request, reply) => {
      const match = FILE.exec(request.params.file);
      const url = match ? await resolveImage(services, kind, request.params.id, match[1] as string) : undefined;
      // Outside /api, so the error handler answers with its 404 page (docs/errors.md).
      if (url === undefined) throw new PageError(404, 'Image not found', 'No image has this address. It may have been replaced by a newer one.');
      return reply.header('cache-control', 'public, max-age=86400').redirect(url, 302);
    });
  }
}
