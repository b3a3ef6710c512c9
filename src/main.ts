import { buildApp } from './app.js';
import { ConfigError, loadConfig } from './config/config.js';
import { filesOpenToOthers } from './config/file-modes.js';
import { createServices } from './services.js';
import { sqliteFiles } from './storage/connect.js';
import { ensureSigningKeys } from './modules/oidc/oidc-keys.service.js';
import { applyConfiguredAdmins } from './modules/accounts/people-admin.service.js';
import { cliActing } from './core/acting.js';

/**
 * The process entry: env → config → services → app → listen; graceful shutdown on SIGTERM/SIGINT
 * (stop accepting, finish in-flight requests, close the database).
 */
export async function serve(env: Record<string, string | undefined>): Promise<void> {
  let config;
  try {
    config = loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  let services;
  try {
    services = await createServices(config);
  } catch (error) {
    // Issue #36 §4: a secret the database does not know is a setting to fix, reported like the others.
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  // Issue #22: ID-token signing keys exist from the first start (and a sealed one that cannot be opened stops it here).
  await ensureSigningKeys(services);
  const app = await buildApp(services);
  // Issue #39: GATEHOUSE_ADMINS names a first set of administrators, made so at every start (audited
  // as the operator; a no-op once they are). Names of nobody are logged, not fatal: the account may come later.
  if (config.admins.length > 0) {
    const applied = await applyConfiguredAdmins(services, cliActing(services.clock), config.admins);
    if (applied.granted.length > 0) services.logger.info({ admins: applied.granted }, 'GATEHOUSE_ADMINS: made administrators');
    if (applied.unknown.length > 0) services.logger.warn({ unknown: applied.unknown }, 'GATEHOUSE_ADMINS names people who do not exist (yet)');
  }
  await app.listen({ port: config.port, host: config.host });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  services.logger.info({ port, baseUrl: config.baseUrl, database: services.dialect, workerId: services.workerId }, `Gatehouse listening on http://${config.host}:${port}`);
  // The server's log only: a CLI command's standard output is its JSON records.
  for (const advice of (await services.database.settingsAdvice?.()) ?? []) services.logger.warn(advice);
  // Issue #36 §4: files made by an earlier version, or by hand, may be open to other users.
  const privateFiles = [...sqliteFiles(config.databaseUrl), ...(config.secrets.length === 0 ? [config.secretFile] : [])];
  for (const advice of filesOpenToOthers(privateFiles)) services.logger.warn(advice);

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    services.logger.info({ signal }, 'shutting down');
    const force = setTimeout(() => process.exit(1), 10_000);
    force.unref();
    app
      .close()
      .then(() => services.close())
      .then(
        () => process.exit(0),
        (error: unknown) => {
          services.logger.error({ err: error }, 'error during shutdown');
          process.exit(1);
        },
      );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

const isEntry = process.argv[1] !== undefined && import.meta.url === new URL(`file://${process.argv[1]}`).href;
if (isEntry) {
  serve(process.env).catch((error: unknown) => {
    process.stderr.write(`Gatehouse failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}
