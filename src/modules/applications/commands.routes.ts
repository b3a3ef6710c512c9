import type { FastifySchemaCompiler } from 'fastify';
import type { App } from '../../http/app-type.js';
import { apiErrorResponses } from '../../http/error.schemas.js';
import { RateLimitedBody } from '../webhooks/webhooks.schemas.js';
import type { Services } from '../../deps.js';
import { presentCommand } from '../resources/resources.js';
import { botActing, botOf, requireBot } from './bot-auth.routes.js';
import { CommandListBody, CommandParams, CommandsPutBody } from './commands.schemas.js';
import { getCommands, overwriteCommands } from './commands.service.js';

/**
 * The schemas of these routes document; checkCommands checks. AJV is bypassed because its
 * coerceTypes: 'array' would wrap a lone object into a one-command list — and a bulk overwrite
 * would then delete every other command — and because the service reports each problem with
 * Discord's codes at its path. The id is checked by the service (404 10002).
 */
const documentOnly: FastifySchemaCompiler<unknown> = () => (value) => ({ value });

// Issue #40 §4: every bot route may answer 429 (docs/bots.md "Rate limits").
const errors = { ...apiErrorResponses(401, 403, 404), 429: RateLimitedBody };

/** GET and PUT /api/v1/applications/{applicationId}/commands, with the app's bot credentials. */
export function registerCommandsApi(app: App, services: Services): void {
  app.get(
    '/api/v1/applications/:applicationId/commands',
    {
      onRequest: requireBot(services),
      schema: {
        tags: ['Commands'],
        summary: "The application's commands",
        description: 'Issue #4: the commands of the application whose bot token is presented, ordered by name.',
        security: [{ bot: [] }],
        params: CommandParams,
        response: { 200: CommandListBody, ...errors },
      },
    },
    async (request) => (await getCommands(services, botOf(request), request.params.applicationId)).map(presentCommand),
  );

  app.put(
    '/api/v1/applications/:applicationId/commands',
    {
      onRequest: requireBot(services),
      validatorCompiler: documentOnly,
      schema: {
        tags: ['Commands'],
        summary: "Overwrite the application's commands",
        description:
          'Issue #4 bulk overwrite: the body is the complete list (at most 100); commands missing from it are deleted, commands keeping their name keep their id. Where and by whom each may be used, as Discord: default_member_permissions, integration_types, contexts (or the older dm_permission). All or nothing: any problem is a 50035 and nothing changes.',
        security: [{ bot: [] }],
        params: CommandParams,
        body: CommandsPutBody,
        response: { 200: CommandListBody, ...apiErrorResponses(400), ...errors },
      },
    },
    async (request) => (await overwriteCommands(services, botActing(request, services.clock), request.params.applicationId, request.body as unknown)).map(presentCommand),
  );
}
