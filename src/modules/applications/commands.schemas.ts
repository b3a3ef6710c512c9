import { Type } from '@sinclair/typebox';
import { CommandResourceBody, CommandResourceListBody } from '../resources/resources.schemas.js';
import { COMMAND_OPTIONS_MAX, COMMANDS_MAX } from './bots.js';

/** TypeBox schemas of the commands API (issue #4). They document; the service checks the body. */

const applicationId = Type.String({ description: 'The application (client) id' });
const guildId = Type.String({ description: 'A server the application is installed in' });
const commandId = Type.String({ description: 'The command id' });

export const CommandParams = Type.Object({ applicationId });

export const OneCommandParams = Type.Object({ applicationId, commandId });

export const GuildCommandParams = Type.Object({ applicationId, guildId });

export const OneGuildCommandParams = Type.Object({ applicationId, guildId, commandId });

const CommandOption = Type.Object(
  {
    name: Type.String({ description: '1–32 lower-case letters, digits, - and _' }),
    description: Type.String({ description: '1–100 characters' }),
    type: Type.Integer({ description: "Discord's option type, 1–11" }),
  },
  { additionalProperties: true, description: 'A Discord-style option; further keys are stored as sent' },
);

export const CommandInputBody = Type.Object(
  {
    name: Type.String({ description: '1–32 lower-case letters (any script), digits, - and _; unique within the list' }),
    description: Type.String({ description: '1–100 characters' }),
    options: Type.Optional(Type.Array(CommandOption, { maxItems: COMMAND_OPTIONS_MAX })),
    type: Type.Optional(Type.Literal(1, { description: '1: chat input command (the default and only type)' })),
    default_member_permissions: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'Permission bits (decimal) a member needs to see and use it in a server; "0": administrators only; null: anyone with Use application commands' })),
    integration_types: Type.Optional(Type.Union([Type.Array(Type.Integer({ minimum: 0, maximum: 1 })), Type.Null()], { description: 'Install types it runs under: 0 server install, 1 user install (DMs with the bot); default both' })),
    contexts: Type.Optional(Type.Union([Type.Array(Type.Integer({ minimum: 0, maximum: 2 })), Type.Null()], { description: 'Where it may be used: 0 server channel, 1 DM with the bot, 2 group DM; default everywhere' })),
    dm_permission: Type.Optional(Type.Boolean({ description: 'Older form of contexts: false keeps it out of DMs when contexts is not sent' })),
  },
  { additionalProperties: true },
);

export const CommandsPutBody = Type.Array(CommandInputBody, { maxItems: COMMANDS_MAX, description: 'The complete list of commands: any command not in it is deleted' });

export const CommandListBody = CommandResourceListBody;


export const CommandBody = CommandResourceBody;

/** PATCH: any of the create fields; those sent replace the command's. */
export const CommandPatchBody = Type.Partial(CommandInputBody);
