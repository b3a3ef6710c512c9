import { API } from '@discordjs/core/http-only';
import { DiscordAPIError, REST } from '@discordjs/rest';
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSession } from '../../src/modules/accounts/sessions.service.js';
import { cookieNames } from '../../src/web/pages.js';
import type { TestApp } from '../support/app.js';
import { personActingOf } from '../support/acting.js';
import { runCommand } from '../support/directory-fixtures.js';
import { given } from '../support/given.js';
import { obtainTokens } from '../support/oauth-factory.js';
import { SseReader } from '../support/sse.js';
import { startInstances, twoInstances, type Instances } from '../support/two-instances.js';

/**
 * Issue #39 §Tests: after `gatehouse people disable`, an unmodified oauth4webapi client's refresh
 * gets invalid_grant and its bearer request to /api/v1/users/@me 401, unmodified @discordjs/core
 * with the bot token of an app the person owns gets 401, and their open channel live stream ends.
 * On PostgreSQL with Redis the clients and the stream talk to a second instance of the same
 * database, which must see the disabling at once.
 */
if (!twoInstances) console.log('operators-disable-person: one instance: the second-instance check needs TEST_DATABASE_URL (PostgreSQL) and TEST_REDIS_URL (Redis)');

const insecure = { [oauth.allowInsecureRequests]: true } as const;

describe('people disable, seen by unmodified clients and an open live stream', () => {
  let instances: Instances | undefined;
  let a: TestApp;
  let baseUrl: string;
  let as: oauth.AuthorizationServer;
  let stream: SseReader | undefined;

  beforeAll(async () => {
    instances = await startInstances();
    ({ a, baseUrl } = instances);
    const issuer = new URL(baseUrl);
    as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }));
  });
  afterAll(async () => {
    stream?.close();
    await instances?.close();
  });

  it('refresh → invalid_grant, bearer → 401, their bot token → 401, and their channel stream ends', async () => {
    const person = await given.person(a);
    // An app of someone else's that the person authorized, and an app the person owns.
    const theirs = await given.bot(a, { name: 'Reader App' });
    const own = await given.bot(a, { owner: person, name: 'Own Bot' });
    const tokens = await obtainTokens(a, theirs.client, person, ['identify']);
    const client: oauth.Client = { client_id: theirs.client.clientId };
    const clientAuth = oauth.ClientSecretPost(theirs.client.clientSecret as string);
    const server = await given.server(a, { owner: person });
    const channelId = server.channels[0]?.id as string;
    const session = await startSession(a.services, personActingOf(person.id), 'vitest');
    const discord = (token: string) => new API(new REST({ api: `${baseUrl}/api`, version: '1', timeout: 15_000, retries: 0 }).setToken(token));

    // Working before (and remembered by the instance the clients talk to).
    expect(await discord(own.token).users.getCurrent()).toMatchObject({ id: own.botUserId, bot: true });
    const before = await oauth.protectedResourceRequest(tokens.access_token, 'GET', new URL('/api/v1/users/@me', baseUrl), new Headers(), null, insecure);
    expect(before.status).toBe(200);
    stream = await SseReader.open(`${baseUrl}/channels/${channelId}/events`, { cookie: `${cookieNames(false).session}=${session.token}` });
    expect(stream.response.status).toBe(200);
    await stream.next();

    await runCommand(a, 'people disable', ['--username', person.username, '--reason', 'spam', '--yes']);

    expect(await stream.next((e) => e.event === 'end')).toBeTruthy();
    await stream.untilEnded();

    const refreshed = await oauth.refreshTokenGrantRequest(as, client, clientAuth, tokens.refresh_token, insecure);
    const refusal = await oauth.processRefreshTokenResponse(as, client, refreshed).catch((e: unknown) => e);
    expect(refusal).toBeInstanceOf(oauth.ResponseBodyError);
    expect((refusal as oauth.ResponseBodyError).error).toBe('invalid_grant');

    // oauth4webapi raises a 401's Bearer challenge (RFC 6750 §3) as WWWAuthenticateChallengeError.
    const refused = await oauth.protectedResourceRequest(tokens.access_token, 'GET', new URL('/api/v1/users/@me', baseUrl), new Headers(), null, insecure).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(oauth.WWWAuthenticateChallengeError);
    expect((refused as oauth.WWWAuthenticateChallengeError).status).toBe(401);

    const botRefused = await discord(own.token).users.getCurrent().catch((e: unknown) => e);
    expect(botRefused).toBeInstanceOf(DiscordAPIError);
    expect((botRefused as DiscordAPIError).status).toBe(401);
  });
});
