#!/usr/bin/env node
// Queues app events for bench/interactions.mjs while no server runs, through the service layer
// (no row written by hand): the person's user install of the app, made and removed again and
// again (installForUser / removeUserInstall, what Settings → Installed apps and the install page
// call), each change queueing APPLICATION_AUTHORIZED or APPLICATION_DEAUTHORIZED in its own
// transaction through the same recorder the server subscribes (recordAppEvents). No worker runs
// here: the server started afterwards finds them all due in its start-up round.
//
// Usage (environment as the server's: DATABASE_URL, REDIS_URL, …):
//   node bench/lib/queue-app-events.mjs <application id> <person id> <count>
// Prints {"queued": <count>} on success.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { DIST } from './processes.mjs';

const load = (path) => import(pathToFileURL(join(DIST, path)).href);

const [applicationId, personId, countText] = process.argv.slice(2);
const count = Number(countText);
if (!applicationId || !personId || !(Number.isInteger(count) && count >= 1)) throw new Error('usage: queue-app-events.mjs <application id> <person id> <count>');

const { loadConfig } = await load('src/config/config.js');
const { createServices } = await load('src/services.js');
const { recordAppEvents } = await load('src/modules/app-events/app-events.service.js');
const { installForUser, removeUserInstall } = await load('src/modules/applications/user-installs.service.js');
const { person } = await load('src/core/actor.js');

const services = await createServices({ ...loadConfig(process.env), logLevel: 'warn' }, { backgroundCheckpoints: false, maintenance: false });
try {
  recordAppEvents(services);
  const acting = () => ({ actor: person(personId), address: null, requestId: null, at: services.clock.now(), reason: null });
  for (let i = 0; i < count; i++) {
    const changed = i % 2 === 0 ? await installForUser(services, acting(), applicationId) : await removeUserInstall(services, acting(), applicationId);
    if (!changed) throw new Error(`change ${i} changed nothing (was the user install already ${i % 2 === 0 ? 'there' : 'gone'}?)`);
  }
  process.stdout.write(`${JSON.stringify({ queued: count })}\n`);
} finally {
  await services.close();
}
