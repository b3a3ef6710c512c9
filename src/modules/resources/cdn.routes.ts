import { Type } from '@sinclair/typebox';
import { PageError } from '../../core/errors.js';
import type { App } from '../../http/app-type.js';
import { NON_DOCUMENT_CSP } from '../../http/security-headers.js';
import type { Services } from '../../deps.js';
import { loadImage, type ImageKind } from './cdn.service.js';
import { ImageCache } from './image-cache.js';

const Params = Type.Object({ id: Type.String(), file: Type.String() });
// Discord's CDN file names: {hash}.{png|jpg|jpeg|webp|gif}; libraries add ?size=….
const FILE = /^([0-9a-f]{32})\.(?:png|jpe?g|webp|gif)$/;

/** Issue #36 §4: nothing in an image answer may run or load anything, even opened on its own. */
const IMAGE_CSP = `${NON_DOCUMENT_CSP}; sandbox`;

/**
 * DESIGN §1: Discord's CDN paths on {base_url}, so a library whose CDN base is set to Gatehouse
 * builds working image URLs from `avatar` / `icon` hashes: `/avatars/{user_or_webhook_id}/{hash}.png`
 * (discord.py and discord.js build webhook avatars there too), `/icons/{server_id}/{hash}.png`,
 * `/app-icons/{application_id}/{hash}.png`.
 *
 * DESIGN §4, issue #36 §4: images are served from our origin and no route redirects to an address
 * a user supplied, so each route fetches the stored URL through the outbound client and serves
 * the bytes itself, only as PNG, JPEG, GIF or WebP (cdn.service.ts loadImage), with nosniff, a
 * sandboxing CSP and a short cache. Whatever cannot be served is a 404, never a 5xx and never a
 * redirect. Fetched images are kept in memory for a while (image-cache.ts). Uploaded images
 * (issue #42 §3, uploaded-images.service.ts) are read from the blob store instead.
 */
export function registerCdnRoutes(app: App, services: Services): void {
  const cache = new ImageCache({ maxBytes: 32 * 1024 * 1024, maxEntries: 10_000, ttlMs: 10 * 60 * 1000, failureTtlMs: 60 * 1000 });
  for (const kind of ['avatars', 'icons', 'app-icons'] as const satisfies readonly ImageKind[]) {
    app.get(`/${kind}/:id/:file`, { schema: { hide: true, params: Params } }, async (request, reply) => {
      const match = FILE.exec(request.params.file);
      const image = match ? await loadImage(services, cache, kind, request.params.id, match[1] as string) : undefined;
      // Outside /api, so the error handler answers with its 404 page (docs/errors.md).
      if (image === undefined) throw new PageError(404, 'Image not found', 'No image has this address, or it could not be fetched. It may have been replaced by a newer one.');
      if (image.uploaded) {
        // Issue #42 §3: the hash in the path names the uploaded bytes, so the answer never changes:
        // cached for a year, and the hash is the ETag.
        const etag = `"${match?.[1] ?? ''}"`;
        reply.header('etag', etag).header('cache-control', 'public, max-age=31536000, immutable');
        const asked = request.headers['if-none-match'];
        if (asked !== undefined && asked.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag)) {
          return reply.code(304).header('x-content-type-options', 'nosniff').send();
        }
      } else {
        reply.header('cache-control', 'public, max-age=3600');
      }
      return reply
        .header('content-type', image.type)
        .header('x-content-type-options', 'nosniff')
        .header('content-security-policy', IMAGE_CSP)
        // Other origins (a client whose CDN base is Gatehouse) may show the image.
        .header('cross-origin-resource-policy', 'cross-origin')
        .send(image.body);
    });
  }
}
