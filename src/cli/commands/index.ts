import type { CliCommand } from '../command.js';

/** Every CLI command; each noun's file adds its list here. */
export const commands: CliCommand[] = [];
