#!/usr/bin/env node
import { ApiError } from '../core/errors.js';
import { ConfigError, loadConfig } from '../config/config.js';
import { serverSecrets } from '../config/server-secret.js';
import { secretCheck } from '../core/sealed.js';
import { createProcessLog } from '../http/log-destination.js';
import { serve } from '../main.js';
import { recordAuditLog } from '../modules/audit/audit.service.js';
import { createServices } from '../services.js';
import { connectDatabase } from '../storage/connect.js';
import { migrateToLatest } from '../storage/migrate.js';
import { adoptSecretCheck } from '../storage/server-secret-check.js';
import { CliUsageError, parseFlags, resolveCommand, type CliCommand } from './command.js';
import { commands } from './commands/index.js';

/**
 * `gatehouse <noun> <verb> [--flag value …] [--json]` (DESIGN §8). With --json a command prints
 * exactly one JSON object on stdout; errors go to stderr with a non-zero exit status.
 */
function usage(): string {
  const lines = ['Usage: gatehouse <command> [--flag value …] [--json]', '', 'Commands:', '  serve                 start the HTTP service', '  migrate               apply pending database migrations', '  secret adopt          make the database take this server secret (the previous one is lost)'];
  for (const c of commands) lines.push(`  ${c.name.padEnd(22)}${c.summary}`);
  lines.push('', 'Run "gatehouse <command> --help" for its flags. Settings come from the environment (README).');
  return lines.join('\n');
}

function commandHelp(c: CliCommand): string {
  const lines = [`Usage: gatehouse ${c.name} [--json]`, '', c.summary, ''];
  for (const [name, spec] of Object.entries(c.flags)) {
    lines.push(`  --${name}${spec.boolean ? '' : ' <value>'}${spec.required ? ' (required)' : ''}${spec.repeatable ? ' (repeatable)' : ''}`.padEnd(40) + spec.description);
  }
  return lines.join('\n');
}

function printRecord(record: Record<string, unknown>, json: boolean): void {
  if (json) {
    process.stdout.write(`${JSON.stringify(record)}\n`);
    return;
  }
  for (const [key, value] of Object.entries(record)) {
    process.stdout.write(`${key}: ${typeof value === 'string' ? value : JSON.stringify(value)}\n`);
  }
}

export async function runCli(argv: string[], env: Record<string, string | undefined>): Promise<number> {
  const [first] = argv;
  if (!first || first === '--help' || first === 'help') {
    process.stdout.write(`${usage()}\n`);
    return first ? 0 : 2;
  }
  try {
    if (first === 'serve') {
      await serve(env);
      return -1; // keeps running
    }
    const config = loadConfig(env);
    if (first === 'migrate') {
      const handle = connectDatabase(config.databaseUrl, { durability: config.durability });
      try {
        const applied = await migrateToLatest(handle.db);
        printRecord({ applied }, argv.includes('--json'));
      } finally {
        await handle.close();
      }
      return 0;
    }
    if (first === 'secret' && argv[1] === 'adopt') {
      if (argv.includes('--help')) {
        process.stdout.write('Usage: gatehouse secret adopt [--json]\n\nRecords this configuration\'s server secret as the database\'s, for when the one it was used with is lost.\n');
        return 0;
      }
      // Issue #36 §4: every other command refuses to start on a database used with another secret;
      // this one is how an operator who lost that secret says so (docs/operations.md).
      const handle = connectDatabase(config.databaseUrl, { durability: config.durability });
      try {
        await migrateToLatest(handle.db);
        await adoptSecretCheck(handle.db, secretCheck(serverSecrets(config)[0]), Date.now());
        printRecord({ adopted: true, message: 'The database now takes this server secret; start every instance with it.' }, argv.includes('--json'));
      } finally {
        await handle.close();
      }
      return 0;
    }
    let resolved: { command: CliCommand; args: string[] };
    try {
      resolved = resolveCommand(commands, argv);
    } catch (error) {
      if (!(error instanceof CliUsageError)) throw error;
      process.stderr.write(`gatehouse: ${error.message}\n\n${usage()}\n`);
      return 2;
    }
    const { command, args } = resolved;
    if (args.includes('--help')) {
      process.stdout.write(`${commandHelp(command)}\n`);
      return 0;
    }
    const { flags, json } = parseFlags(args, command.flags);
    // Warnings (Redis unreachable, say) go to standard error: standard output is the command's
    // records, which scripts and `gatehouse batch` callers parse.
    const log = createProcessLog('warn', { fd: 2, pretty: process.stderr.isTTY === true });
    // A command is over before a WAL checkpoint thread would matter (storage/sqlite/wal-checkpoint.ts).
    const services = await createServices({ ...config, logLevel: 'warn' }, { logger: log.logger, backgroundCheckpoints: false, maintenance: false });
    // Issue #37 §5: the operator's changes are in the audit log too.
    recordAuditLog(services);
    try {
      printRecord(await command.run(services, flags), json);
    } finally {
      await services.close();
      log.close();
    }
    return 0;
  } catch (error) {
    if (error instanceof CliUsageError || error instanceof ConfigError) {
      process.stderr.write(`gatehouse: ${error.message}\n`);
      return 2;
    }
    if (error instanceof ApiError) {
      const details = error.errors ? ` ${JSON.stringify(error.errors)}` : '';
      process.stderr.write(`gatehouse: ${error.message}${details}\n`);
      return 1;
    }
    process.stderr.write(`gatehouse: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}

runCli(process.argv.slice(2), process.env).then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (error: unknown) => {
    process.stderr.write(`gatehouse: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
