import type { Channel } from '../../src/modules/directory/channels.js';
import { createServer } from '../../src/modules/directory/servers.service.js';
import { serveTestApp, type ServedApp } from './browser.js';
import { createPerson } from './oauth-factory.js';
import { personActingOf } from './acting.js';

export interface ServedChannel {
  served: ServedApp;
  /** The first channel of a server `ownerId` owns: where the e2e tests' webhooks post. */
  channel: Channel;
  ownerId: string;
}

/**
 * The test app on a real port with one person owning one server named `serverName`, for the
 * e2e tests that point a real client library (Slack's, discord.js's, GitHub's signing) at a webhook.
 */
export async function serveOwnedChannel(serverName: string): Promise<ServedChannel> {
  const served = await serveTestApp();
  try {
    const owner = await createPerson(served.t);
    const server = await createServer(served.t.services, personActingOf(owner.id), { name: serverName });
    return { served, channel: server.channels[0] as Channel, ownerId: owner.id };
  } catch (error) {
    // The caller never gets `served` to close in its afterAll: close it here.
    await served.close();
    throw error;
  }
}
