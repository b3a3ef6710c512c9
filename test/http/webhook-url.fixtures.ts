import type { LightMyRequestResponse } from 'fastify';
import type { Channel } from '../../src/modules/directory/channels.js';
import { createServer, getServer } from '../../src/modules/directory/servers.service.js';
import type { ChannelEvent } from '../../src/realtime/channel-events.js';
import { createWebhook } from '../../src/modules/webhooks/webhooks.service.js';
import type { Webhook } from '../../src/modules/webhooks/webhooks.js';
import type { TestApp } from '../support/app.js';
import { createPerson, nextAddress } from '../support/oauth-factory.js';

/** A webhook made through the management service, with the URL path its holder uses. */
export interface TestWebhook {
  webhook: Webhook;
  token: string;
  channel: Channel;
  /** /api/v1/webhooks/{id}/{token} */
  path: string;
}

/** A person's server with its #general channel, and a webhook there (a second one in the same channel with `channel`). */
export async function createTestWebhook(t: TestApp, input: { name?: string; avatarUrl?: string | null; channel?: Channel } = {}): Promise<TestWebhook> {
  let channel = input.channel;
  // The webhook's creator needs Manage webhooks there: the server's owner.
  let ownerId = input.channel?.serverId ? (await getServer(t.services, input.channel.serverId))?.ownerId : undefined;
  if (!channel || ownerId === undefined) {
    ownerId = (await createPerson(t)).id;
    const server = await createServer(t.services, ownerId, { name: 'Builds' });
    channel = server.channels[0] as Channel;
  }
  const { webhook, token } = await createWebhook(t.services, { kind: 'person', id: ownerId }, channel, { name: input.name ?? 'CI', avatarUrl: input.avatarUrl ?? null });
  return { webhook, token, channel, path: `/api/v1/webhooks/${webhook.id}/${token}` };
}

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/**
 * A request from a client address of its own (unless given), so that the per-address bucket of
 * invalid requests never leaks from one test into another.
 */
export function call(t: TestApp, method: Method, url: string, payload?: unknown, address: string = nextAddress()): Promise<LightMyRequestResponse> {
  return t.app.inject({ method, url, remoteAddress: address, ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) });
}

/** Records what the app publishes on a channel's live-update bus. */
export function recordEvents(t: TestApp, channelId: string): ChannelEvent[] {
  const events: ChannelEvent[] = [];
  t.services.events.subscribe(channelId, (e) => events.push(e));
  return events;
}
