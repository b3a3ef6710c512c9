import type { LightMyRequestResponse } from 'fastify';
import type { Channel } from '../../src/modules/directory/channels.js';
import type { ChannelEvent } from '../../src/realtime/channel-events.js';
import type { TestApp } from '../support/app.js';
import { given, type TestWebhook } from '../support/given.js';
import { nextAddress } from '../support/oauth-factory.js';

/** A webhook made through the management service, with the URL path its holder uses (given.webhook). */
export type { TestWebhook } from '../support/given.js';
export const createTestWebhook = (t: TestApp, input: { name?: string; avatarUrl?: string | null; channel?: Channel } = {}): Promise<TestWebhook> => given.webhook(t, input);

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
