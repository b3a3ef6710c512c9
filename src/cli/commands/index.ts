import type { CliCommand } from '../command.js';
import { appsCommands } from './apps.js';
import { batchCommands } from './batch.js';
import { directoryCommands } from './directory.js';
import { seedCommands } from './seed.js';
import { peopleCommands } from './people.js';
import { oidcCommands } from './oidc.js';

/** Every CLI command; each noun's file adds its list here. */
export const commands: CliCommand[] = [...peopleCommands, ...directoryCommands, ...seedCommands, ...appsCommands, ...batchCommands, ...oidcCommands];
