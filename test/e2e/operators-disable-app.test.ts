import { API } from '@discordjs/core/http-only';
import { DiscordAPIError, REST } from '@discordjs/rest';
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../support/app.js';
import { runCommand } from '../support/directory-fixtures.js';
import { given, type TestBot } from '../support/given.js';
import { obtainTokens } from '../support/oauth-factory.js';
import { startInstances, twoInstances, type Instances } from '../support/two-instances.js';

/**
 * Issue #39 §Tests: after `gatehouse apps disable`, an unmodified oauth4webapi client's refresh
 * gets invalid_grant and its bearer request 401, and unmodified @discordjs/core with the app's bot
 * token gets 401; `apps enable` restores the bot. On PostgreSQL with Redis the clients talk to a
 * second instance of the same database, whose caches must see the disabling at once.
 */
if (!twoInstances) console.log('operators-disable-app: one instance: the second-instance check needs TEST_DATABASE_URL (PostgreSQL) and TEST_REDIS_URL (Redis)');

const insecure = { [oauth.allowInsecureRequests]: true } as const;

describe('apps disable, seen by unmodified clients', () => {
  let instances: Instances | undefined;
  let a: TestApp;
  let baseUrl: string;
  let bot: TestBot;
  let as: oauth.AuthorizationServer;

  beforeAll(async () => {
    instances = await startInstances();
    ({ a, baseUrl } = instances);
    bot = await given.bot(a, { name: 'Rowdy Bot' });
    const issuer = new URL(baseUrl);
    as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }));
  });
  afterAll(async () => instances?.close());

  const discord = (token: string) => new API(new REST({ api: `${baseUrl}/api`, version: '1', timeout: 15_000, retries: 0 }).setToken(token));

  /** oauth4webapi raises a 401's Bearer challenge (RFC 6750 §3) as WWWAuthenticateChallengeError. */
  async function expectInvalidToken(accessToken: string): Promise<void> {
    const refused = await oauth.protectedResourceRequest(accessToken, 'GET', new URL('/api/v1/users/@me', baseUrl), new Headers(), null, insecure).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(oauth.WWWAuthenticateChallengeError);
    const challenge = refused as oauth.WWWAuthenticateChallengeError;
    expect(challenge.status).toBe(401);
    expect(challenge.cause[0]).toMatchObject({ scheme: 'bearer', parameters: { error: 'invalid_token' } });
  }

  it('refresh → invalid_grant, bearer → 401, the bot token → 401; enabling brings the bot back', async () => {
    const person = await given.person(a);
    const tokens = await obtainTokens(a, bot.client, person, ['identify']);
    const client: oauth.Client = { client_id: bot.client.clientId };
    const clientAuth = oauth.ClientSecretPost(bot.client.clientSecret as string);

    // Working before: the bot reads itself, the bearer token reads the person (and is remembered by the instance).
    expect(await discord(bot.token).users.getCurrent()).toMatchObject({ id: bot.botUserId, bot: true });
    const before = await oauth.protectedResourceRequest(tokens.access_token, 'GET', new URL('/api/v1/users/@me', baseUrl), new Headers(), null, insecure);
    expect(before.status).toBe(200);

    await runCommand(a, 'apps disable', ['--app', bot.client.app.id, '--reason', 'abuse', '--yes']);

    const refreshed = await oauth.refreshTokenGrantRequest(as, client, clientAuth, tokens.refresh_token, insecure);
    const refusal = await oauth.processRefreshTokenResponse(as, client, refreshed).catch((e: unknown) => e);
    expect(refusal).toBeInstanceOf(oauth.ResponseBodyError);
    expect((refusal as oauth.ResponseBodyError).error).toBe('invalid_grant');

    await expectInvalidToken(tokens.access_token);

    const botRefused = await discord(bot.token).users.getCurrent().catch((e: unknown) => e);
    expect(botRefused).toBeInstanceOf(DiscordAPIError);
    expect((botRefused as DiscordAPIError).status).toBe(401);

    await runCommand(a, 'apps enable', ['--app', bot.client.app.id]);
    expect(await discord(bot.token).users.getCurrent()).toMatchObject({ id: bot.botUserId, bot: true });
    // The revoked grant stays revoked: people authorize the app again.
    await expectInvalidToken(tokens.access_token);
  });
});
