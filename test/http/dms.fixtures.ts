import type { LightMyRequestResponse } from 'fastify';
import { installForUser } from '../../src/modules/applications/user-installs.service.js';
import type { Person } from '../../src/modules/directory/people.js';
import type { TestApp } from '../support/app.js';
import { given, type TestBot } from '../support/given.js';
import { actingOf } from '../support/acting.js';

/** Bots for the direct-message and bot-message tests (given.bot: made through the services). */
export type { TestBot } from '../support/given.js';
export const createBot = (t: TestApp, input: { name?: string; owner?: Person } = {}): Promise<TestBot> => given.bot(t, input);

/** What the consent flow records for applications.commands without bot (SPEC §5.2). */
export async function userInstall(t: TestApp, bot: TestBot, person: Person): Promise<void> {
  await installForUser(t.services, actingOf({ kind: 'person', id: person.id }), bot.client.app.id);
}

export async function openDm(t: TestApp, bot: TestBot, body: unknown, headers: Record<string, string> = bot.headers): Promise<LightMyRequestResponse> {
  return t.app.inject({ method: 'POST', url: '/api/v1/users/@me/channels', headers: { ...headers, 'content-type': 'application/json' }, payload: JSON.stringify(body) });
}

export async function botPost(t: TestApp, bot: TestBot, channelId: string, body: unknown, headers: Record<string, string> = bot.headers): Promise<LightMyRequestResponse> {
  return t.app.inject({ method: 'POST', url: `/api/v1/channels/${channelId}/messages`, headers: { ...headers, 'content-type': 'application/json' }, payload: JSON.stringify(body) });
}
