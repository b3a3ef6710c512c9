import { Type } from '@sinclair/typebox';
import { PageError } from '../../core/errors.js';
import type { App } from '../../http/app-type.js';
import type { Services } from '../../deps.js';
import { serveFile } from './files.service.js';

const Params = Type.Object({ channelId: Type.String(), attachmentId: Type.String(), filename: Type.String() });
const Query = Type.Object({ ex: Type.Optional(Type.String()), is: Type.Optional(Type.String()), hm: Type.Optional(Type.String()) }, { additionalProperties: true });

/**
 * Issue #42 §3: files served from our own origin at Discord's path shape, behind signed expiring
 * URLs (files.service.ts serveFile): a bad or expired signature or an unknown file is a 404 page,
 * ranges are honoured, only raster images are inline, everything is nosniff. HEAD answers the
 * same headers (Fastify's HEAD route for every GET).
 */
export function registerFileRoutes(app: App, services: Services): void {
  app.get('/attachments/:channelId/:attachmentId/:filename', { schema: { hide: true, params: Params, querystring: Query } }, async (request, reply) => {
    const { channelId, attachmentId } = request.params;
    const served = await serveFile(services, channelId, attachmentId, request.query, request.headers.range);
    // Outside /api, so the error handler answers with its 404 page (docs/errors.md).
    if (served === undefined) throw new PageError(404, 'File not found', 'No file has this address, or its link has expired. Open the message again for a fresh link.');
    return reply.code(served.status).headers(served.headers).send(served.body);
  });
}
