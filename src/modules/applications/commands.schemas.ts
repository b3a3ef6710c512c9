import { Type } from '@sinclair/typebox';
import { CommandResourceListBody } from '../resources/resources.schemas.js';
import { COMMAND_OPTIONS_MAX, COMMANDS_MAX } from './bots.js';

/** TypeBox schemas of the commands API (issue #4). They document; the service checks the body. */

export const CommandParams = Type.Object({ applicationId: Type.String({ description: 'The application (client) id' }) });

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
  },
  { additionalProperties: true },
);

export const CommandsPutBody = Type.Array(CommandInputBody, { maxItems: COMMANDS_MAX, description: 'The complete list of commands: any command not in it is deleted' });

export const CommandListBody = CommandResourceListBody;

