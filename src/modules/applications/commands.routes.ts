import type { FastifySchemaCompiler } from 'fastify';
import type { App } from '../../http/app-type.js';
import { apiErrorResponses } from '../../http/error.schemas.js';
import { RateLimitedBody } from '../webhooks/webhooks.schemas.js';
import type { Services } from '../../deps.js';
import { presentCommand } from '../resources/resources.js';
import { botActing, botOf, requireBot } from './bot-auth.routes.js';
import { CommandBody, CommandInputBody, CommandListBody, CommandParams, CommandPatchBody, CommandsPutBody, OneCommandParams } from './commands.schemas.js';
import { createCommand, editCommand, getCommand, getCommands, overwriteCommands, removeCommand } from './commands.service.js';

/**
 * The schemas of these routes document; checkCommands checks. AJV is bypassed because its
 * coerceTypes: 'array' would wrap a lone object into a one-command list — and a bulk overwrite
 * would then delete every other command — and because the service reports each problem with
 * Discord's codes at its path. The id is checked by the service (404 10002).
 */
const documentOnly: FastifySchemaCompiler<unknown> = () => (value) => ({ value });

// Issue #40 §4: every bot route may answer 429 (docs/bots.md "Rate limits").
const errors = { ...apiErrorResponses(401, 403, 404), 429: RateLimitedBody };

/** Discord's global application command routes under /api/v1/applications/{applicationId}/commands, with the app's bot credentials. */
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

  // Issue #40 §2: one command at a time, as Discord's API and the libraries on it (discord.js's
  // `application.commands.create`, @discordjs/core's createGlobalCommand) register commands.
  app.post(
    '/api/v1/applications/:applicationId/commands',
    {
      onRequest: requireBot(services),
      validatorCompiler: documentOnly,
      schema: {
        tags: ['Commands'],
        summary: 'Create a command',
        description:
          "One command, under the bulk overwrite's rules. A command of the same name is overwritten and keeps its id (200); otherwise it is added (201), at most 100 (400 30032 beyond).",
        security: [{ bot: [] }],
        params: CommandParams,
        body: CommandInputBody,
        response: { 200: CommandBody, 201: CommandBody, ...apiErrorResponses(400), ...errors },
      },
    },
    async (request, reply) => {
      const { command, created } = await createCommand(services, botActing(request, services.clock), request.params.applicationId, request.body as unknown);
      return reply.code(created ? 201 : 200).send(presentCommand(command));
    },
  );

  app.get(
    '/api/v1/applications/:applicationId/commands/:commandId',
    {
      onRequest: requireBot(services),
      schema: {
        tags: ['Commands'],
        summary: 'One command',
        description: 'An unknown command id is 404 (10063).',
        security: [{ bot: [] }],
        params: OneCommandParams,
        response: { 200: CommandBody, ...errors },
      },
    },
    async (request) => presentCommand(await getCommand(services, botOf(request), request.params.applicationId, request.params.commandId)),
  );

  app.patch(
    '/api/v1/applications/:applicationId/commands/:commandId',
    {
      onRequest: requireBot(services),
      validatorCompiler: documentOnly,
      schema: {
        tags: ['Commands'],
        summary: 'Edit a command',
        description: 'The fields sent replace the command’s; the result is checked as a whole (a new name must be free: 50035). Keeps its id. An unknown command id is 404 (10063).',
        security: [{ bot: [] }],
        params: OneCommandParams,
        body: CommandPatchBody,
        response: { 200: CommandBody, ...apiErrorResponses(400), ...errors },
      },
    },
    async (request) => presentCommand(await editCommand(services, botActing(request, services.clock), request.params.applicationId, request.params.commandId, request.body as unknown)),
  );

  app.delete(
    '/api/v1/applications/:applicationId/commands/:commandId',
    {
      onRequest: requireBot(services),
      schema: {
        tags: ['Commands'],
        summary: 'Delete a command',
        description: '204; an unknown command id is 404 (10063).',
        security: [{ bot: [] }],
        params: OneCommandParams,
        response: { 204: { type: 'null', description: 'Deleted' }, ...errors },
      },
    },
    async (request, reply) => {
      await removeCommand(services, botActing(request, services.clock), request.params.applicationId, request.params.commandId);
      return reply.code(204).send(null);
    },
  );
}
