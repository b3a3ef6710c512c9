import type { TSchema } from '@sinclair/typebox';
import type { FastifySchemaCompiler } from 'fastify';
import type { App } from '../../http/app-type.js';
import { apiErrorResponses } from '../../http/error.schemas.js';
import { RateLimitedBody } from '../webhooks/webhooks.schemas.js';
import type { Services } from '../../deps.js';
import { presentCommand } from '../resources/resources.js';
import { botActing, botOf, requireBot } from './bot-auth.routes.js';
import { CommandBody, CommandInputBody, CommandListBody, CommandParams, CommandPatchBody, CommandsPutBody, GuildCommandParams, OneCommandParams, OneGuildCommandParams } from './commands.schemas.js';
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

/**
 * Discord's application command routes, with the app's bot credentials: the global commands under
 * /api/v1/applications/{applicationId}/commands, and a server's (guild commands, Discord's
 * "…/guilds/{guild_id}/commands", which the discord.js guide's deploy script uses) under
 * /api/v1/applications/{applicationId}/guilds/{guildId}/commands. The same six routes each.
 */
export function registerCommandsApi(app: App, services: Services): void {
  registerScope(app, services, {
    base: '/api/v1/applications/:applicationId/commands',
    params: CommandParams,
    oneParams: OneCommandParams,
    what: "The application's global commands",
  });
  registerScope(app, services, {
    base: '/api/v1/applications/:applicationId/guilds/:guildId/commands',
    params: GuildCommandParams,
    oneParams: OneGuildCommandParams,
    what: "The application's commands in one server it is installed in (a server it is not in is 403 50001). Integration types and contexts are for global commands: a guild command runs in its server's channels",
  });
}

interface Scope {
  base: string;
  params: TSchema;
  oneParams: TSchema;
  what: string;
}

/** The routes' parameters: `guildId` only under …/guilds/{guildId}/ (guild commands), `commandId` only for one command. */
interface Params {
  applicationId: string;
  guildId?: string;
  commandId: string;
}

function registerScope(app: App, services: Services, scope: Scope): void {
  const { base, params, oneParams, what } = scope;
  app.get(
    base,
    {
      onRequest: requireBot(services),
      schema: {
        tags: ['Commands'],
        summary: 'The commands',
        description: `${what}. Issue #4: the commands of the application whose bot token is presented, ordered by name.`,
        security: [{ bot: [] }],
        params,
        response: { 200: CommandListBody, ...errors },
      },
    },
    async (request) => {
      const p = request.params as Params;
      return (await getCommands(services, botOf(request), p.applicationId, p.guildId)).map(presentCommand);
    },
  );

  app.put(
    base,
    {
      onRequest: requireBot(services),
      validatorCompiler: documentOnly,
      schema: {
        tags: ['Commands'],
        summary: 'Overwrite the commands',
        description: `${what}. Issue #4 bulk overwrite: the body is the complete list (at most 100); commands missing from it are deleted, commands keeping their name keep their id. Where and by whom each may be used, as Discord: default_member_permissions, integration_types, contexts (or the older dm_permission). All or nothing: any problem is a 50035 and nothing changes.`,
        security: [{ bot: [] }],
        params,
        body: CommandsPutBody,
        response: { 200: CommandListBody, ...apiErrorResponses(400), ...errors },
      },
    },
    async (request) => {
      const p = request.params as Params;
      return (await overwriteCommands(services, botActing(request, services.clock), p.applicationId, request.body as unknown, p.guildId)).map(presentCommand);
    },
  );

  // Issue #40 §2: one command at a time, as Discord's API and the libraries on it (discord.js's
  // `application.commands.create`, @discordjs/core's createGlobalCommand / createGuildCommand) register commands.
  app.post(
    base,
    {
      onRequest: requireBot(services),
      validatorCompiler: documentOnly,
      schema: {
        tags: ['Commands'],
        summary: 'Create a command',
        description: `${what}. One command, under the bulk overwrite's rules. A command of the same name is overwritten and keeps its id (200); otherwise it is added (201), at most 100 (400 30032 beyond).`,
        security: [{ bot: [] }],
        params,
        body: CommandInputBody,
        response: { 200: CommandBody, 201: CommandBody, ...apiErrorResponses(400), ...errors },
      },
    },
    async (request, reply) => {
      const p = request.params as Params;
      const { command, created } = await createCommand(services, botActing(request, services.clock), p.applicationId, request.body as unknown, p.guildId);
      return reply.code(created ? 201 : 200).send(presentCommand(command));
    },
  );

  app.get(
    `${base}/:commandId`,
    {
      onRequest: requireBot(services),
      schema: {
        tags: ['Commands'],
        summary: 'One command',
        description: `${what}. An unknown command id is 404 (10063).`,
        security: [{ bot: [] }],
        params: oneParams,
        response: { 200: CommandBody, ...errors },
      },
    },
    async (request) => {
      const p = request.params as Params;
      return presentCommand(await getCommand(services, botOf(request), p.applicationId, p.commandId, p.guildId));
    },
  );

  app.patch(
    `${base}/:commandId`,
    {
      onRequest: requireBot(services),
      validatorCompiler: documentOnly,
      schema: {
        tags: ['Commands'],
        summary: 'Edit a command',
        description: `${what}. The fields sent replace the command’s; the result is checked as a whole (a new name must be free: 50035). Keeps its id. An unknown command id is 404 (10063).`,
        security: [{ bot: [] }],
        params: oneParams,
        body: CommandPatchBody,
        response: { 200: CommandBody, ...apiErrorResponses(400), ...errors },
      },
    },
    async (request) => {
      const p = request.params as Params;
      return presentCommand(await editCommand(services, botActing(request, services.clock), p.applicationId, p.commandId, request.body as unknown, p.guildId));
    },
  );

  app.delete(
    `${base}/:commandId`,
    {
      onRequest: requireBot(services),
      schema: {
        tags: ['Commands'],
        summary: 'Delete a command',
        description: `${what}. 204; an unknown command id is 404 (10063).`,
        security: [{ bot: [] }],
        params: oneParams,
        response: { 204: { type: 'null', description: 'Deleted' }, ...errors },
      },
    },
    async (request, reply) => {
      const p = request.params as Params;
      await removeCommand(services, botActing(request, services.clock), p.applicationId, p.commandId, p.guildId);
      return reply.code(204).send(null);
    },
  );
}
