import { Type } from '@sinclair/typebox';
import { ApiError, PageError } from '../../core/errors.js';
import { personActing } from '../../http/acting.js';
import type { App } from '../../http/app-type.js';
import { signedInPages } from '../../http/pages.js';
import type { Services } from '../../deps.js';
import { addResourceServer, removeResourceServer } from './resource-servers.service.js';

const hide = { hide: true };
const AppParams = Type.Object({ id: Type.String({ maxLength: 32 }) });
const ServerParams = Type.Object({ id: Type.String({ maxLength: 32 }), serverId: Type.String({ maxLength: 32 }) });
const AddBody = Type.Object(
  { identifier: Type.Optional(Type.String({ maxLength: 2048 })), scopes: Type.Optional(Type.String({ maxLength: 20_000 })), jwt: Type.Optional(Type.String({ maxLength: 8 })),
    // RFC 8693 (issue #41): one checkbox per delegable scope, so one value or several.
    delegate: Type.Optional(Type.Union([Type.String({ maxLength: 32 }), Type.Array(Type.String({ maxLength: 32 }), { maxItems: 8 })])),
  },
  { additionalProperties: true },
);

/** A 50035's messages, for the page that says why nothing was saved. */
function messagesOf(error: ApiError): string {
  return Object.values(error.errors ?? {})
    .flatMap((node) => (node as { _errors?: { message: string }[] })._errors ?? [])
    .map((e) => e.message)
    .join(' ');
}

/**
 * The portal's Resource servers forms (issue #41 §1), for the app's owner (signedInPages; anyone
 * else's app is 404 from the service). Each answer goes back to the app page's section.
 */
export function registerResourceServerPages(pages: App, services: Services): void {
  signedInPages(pages, (scope) => {
    scope.post('/developers/applications/:id/resource-servers', { schema: { ...hide, params: AppParams, body: AddBody } }, async (request, reply) => {
      const appId = request.params.id;
      // One scope per line: its name, then its consent-screen words.
      const lines = (request.body.scopes ?? '').split(/\r?\n/).map((line) => line.trim()).filter(Boolean);
      const names = lines.map((line) => line.split(/\s+/, 1)[0] as string);
      const descriptions = lines.map((line) => line.slice((line.split(/\s+/, 1)[0] as string).length).trim());
      try {
        await addResourceServer(services, personActing(request, services.clock), appId, { identifier: (request.body.identifier ?? '').trim(), scopes: names, scopeDescriptions: descriptions, jwtAccessTokens: request.body.jwt === 'on', delegatedScopes: ([] as string[]).concat(request.body.delegate ?? []) });
      } catch (error) {
        if (error instanceof ApiError && error.code === 50035) throw new PageError(400, 'Resource server not added', `${messagesOf(error)} Go back and correct it.`);
        throw error;
      }
      return reply.redirect(`/developers/applications/${appId}?saved=1#resource-servers`, 303);
    });

    scope.post('/developers/applications/:id/resource-servers/:serverId/remove', { schema: { ...hide, params: ServerParams } }, async (request, reply) => {
      const { id: appId, serverId } = request.params;
      await removeResourceServer(services, personActing(request, services.clock), appId, serverId);
      return reply.redirect(`/developers/applications/${appId}?saved=1#resource-servers`, 303);
    });
  });
}
