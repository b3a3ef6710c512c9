import type { LightMyRequestResponse } from 'fastify';
import { enableBot } from '../../src/modules/applications/bots.service.js';
import { installForUser } from '../../src/modules/applications/user-installs.service.js';
import type { Person } from '../../src/modules/directory/people.js';
import type { TestApp } from '../support/app.js';
import { createClient, createPerson, type TestClient } from '../support/oauth-factory.js';
import { OPERATOR } from '../../src/core/actor.js';

/**
 * Bots for the direct-message and bot-message tests: an app with a bot account and its token,
 * made through the services (the developer portal is tested elsewhere).
 */
export interface TestBot {
  client: TestClient;
  botUserId: string;
  token: string;
  /** `Authorization: Bot <token>` */
  headers: { authorization: string };
}

export async function createBot(t: TestApp, input: { name?: string; owner?: Person } = {}): Promise<TestBot> {
  const owner = input.owner ?? (await createPerson(t));
  const client = await createClient(t, { owner, name: input.name ?? 'Weather Bot' });
  const { botUserId, token } = await enableBot(t.services, OPERATOR, client.app.id);
  return { client, botUserId, token, headers: { authorization: `Bot ${token}` } };
}

/** What the consent flow records for applications.commands without bot (SPEC §5.2). */
export async function userInstall(t: TestApp, bot: TestBot, person: Person): Promise<void> {
  await installForUser(t.services, bot.client.app.id, person.id);
}

export async function openDm(t: TestApp, bot: TestBot, body: unknown, headers: Record<string, string> = bot.headers): Promise<LightMyRequestResponse> {
  return t.app.inject({ method: 'POST', url: '/api/v1/users/@me/channels', headers: { ...headers, 'content-type': 'application/json' }, payload: JSON.stringify(body) });
}

export async function botPost(t: TestApp, bot: TestBot, channelId: string, body: unknown, headers: Record<string, string> = bot.headers): Promise<LightMyRequestResponse> {
  return t.app.inject({ method: 'POST', url: `/api/v1/channels/${channelId}/messages`, headers: { ...headers, 'content-type': 'application/json' }, payload: JSON.stringify(body) });
}
