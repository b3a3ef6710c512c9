import type { CliCommand } from '../command.js';
import { appsCommands } from './apps.js';
import { auditCommands } from './audit.js';
import { batchCommand } from './batch.js';
import { directoryCommands } from './directory.js';
import { serversAdminCommands } from './servers-admin.js';
import { seedCommands } from './seed.js';
import { peopleCommands } from './people.js';
import { oidcCommands } from './oidc.js';
import { mailCommands } from './mail.js';
import { resourceServerCommands } from './resource-servers.js';
import { clientRegistrationCommands } from './client-registration.js';

/** The commands a single command line or one `batch` line can name; each noun's file adds its list here. */
const lineCommands: readonly CliCommand[] = [...peopleCommands, ...directoryCommands, ...serversAdminCommands, ...seedCommands, ...appsCommands, ...oidcCommands, ...auditCommands, ...mailCommands, ...resourceServerCommands, ...clientRegistrationCommands];

/** Every CLI command: the line commands and `batch`, which runs them from stdin. */
export const commands: readonly CliCommand[] = [...lineCommands, batchCommand(lineCommands)];
