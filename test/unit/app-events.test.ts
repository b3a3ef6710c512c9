import { createPublicKey, verify } from 'node:crypto';
import { verifyKey } from 'discord-interactions';
import { describe, expect, it } from 'vitest';
import { MINUTE, SECOND } from '../../src/core/clock.js';
import {
  EVENT_RETRY_WINDOW_MS,
  badSignatureHeaders,
  endpointUrlProblem,
  eventBody,
  eventRetryDelayMs,
  isPongAnswer,
  nextEventAttempt,
  privateKeyFromSeed,
  publicKeyHex,
  signatureHeaders,
} from '../../src/modules/app-events/app-events.js';

/** Issue #40 §1: requests to apps are signed exactly as Discord signs them; failed events are retried for at least 10 minutes. */
describe('app request signatures (Discord: X-Signature-Ed25519 over X-Signature-Timestamp + body)', () => {
  // RFC 8032 §7.1, TEST 1: the seed and its public key.
  const seed = Buffer.from('9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60', 'hex');
  const key = privateKeyFromSeed(seed);

  it('the public key of a seed is RFC 8032’s, in hex as Discord shows verify_key', () => {
    expect(publicKeyHex(key)).toBe('d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a');
  });

  it('the timestamp is unix seconds and the signature verifies over timestamp + body, with node:crypto and discord-interactions', async () => {
    const body = JSON.stringify({ version: 1, application_id: '1', type: 0 });
    const headers = signatureHeaders(key, Date.UTC(2026, 10, 21, 12, 0, 0, 999), body);
    expect(headers['x-signature-timestamp']).toBe(String(Date.UTC(2026, 10, 21, 12, 0, 0) / 1000));
    expect(headers['x-signature-ed25519']).toMatch(/^[0-9a-f]{128}$/);
    const message = Buffer.from(headers['x-signature-timestamp'] + body);
    expect(verify(null, message, createPublicKey(key), Buffer.from(headers['x-signature-ed25519'], 'hex'))).toBe(true);
    expect(await verifyKey(body, headers['x-signature-ed25519'], headers['x-signature-timestamp'], publicKeyHex(key))).toBe(true);
    expect(await verifyKey(`${body} `, headers['x-signature-ed25519'], headers['x-signature-timestamp'], publicKeyHex(key))).toBe(false);
  });

  it('the bad-signature check sends a well-formed signature that does not verify', async () => {
    const body = JSON.stringify({ id: '2', application_id: '1', type: 1, token: 't', version: 1 });
    const headers = badSignatureHeaders(key, Date.UTC(2026, 10, 21), body);
    expect(headers['x-signature-ed25519']).toMatch(/^[0-9a-f]{128}$/);
    expect(await verifyKey(body, headers['x-signature-ed25519'], headers['x-signature-timestamp'], publicKeyHex(key))).toBe(false);
  });
});

describe('app event bodies and answers', () => {
  it('an event is Discord’s webhook event body: version 1, application_id, type 1, event { type, timestamp, data }', () => {
    const body = JSON.parse(eventBody('42', 'APPLICATION_DEAUTHORIZED', Date.UTC(2026, 10, 21, 12), { user: { id: '7' } })) as unknown;
    expect(body).toEqual({ version: 1, application_id: '42', type: 1, event: { type: 'APPLICATION_DEAUTHORIZED', timestamp: '2026-11-21T12:00:00.000Z', data: { user: { id: '7' } } } });
  });

  it('a PING is answered only by 200 with a JSON type 1', () => {
    expect(isPongAnswer(200, Buffer.from('{"type":1}'))).toBe(true);
    expect(isPongAnswer(204, Buffer.from(''))).toBe(false);
    expect(isPongAnswer(200, Buffer.from('{"type":4}'))).toBe(false);
    expect(isPongAnswer(200, Buffer.from('type: 1'))).toBe(false);
  });
});

describe('retries of a failed event', () => {
  it('wait 5 s, doubling, at most 5 minutes', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 8, 20].map(eventRetryDelayMs)).toEqual([5, 10, 20, 40, 80, 160, 300, 300, 300].map((s) => s * SECOND));
  });

  it('go on for at least 10 minutes after the event, and stop once the window is over', () => {
    const created = 0;
    let now = created;
    let attempts = 0;
    let last = now;
    for (;;) {
      attempts += 1;
      const next = nextEventAttempt(created, attempts, now);
      if (next === undefined) break;
      last = next;
      now = next;
    }
    expect(last - created).toBeGreaterThanOrEqual(10 * MINUTE);
    expect(last - created).toBeLessThanOrEqual(EVENT_RETRY_WINDOW_MS);
  });
});

describe('endpoint URLs', () => {
  it('https only, unless private addresses are allowed; no credentials, no fragment, at most 2048 characters', () => {
    expect(endpointUrlProblem('https://bot.example/interactions', false)).toBeUndefined();
    expect(endpointUrlProblem('http://bot.example/interactions', false)).toBe('The URL must start with https://.');
    expect(endpointUrlProblem('http://127.0.0.1:3000/interactions', true)).toBeUndefined();
    expect(endpointUrlProblem('https://user:pw@bot.example/', false)).toBe('The URL must not carry a user name or password.');
    expect(endpointUrlProblem('https://bot.example/#x', false)).toBe('The URL must not have a fragment (#…).');
    expect(endpointUrlProblem('not a url', false)).toBe('Not a well formed URL.');
    expect(endpointUrlProblem(`https://bot.example/${'a'.repeat(2048)}`, false)).toBe('Must be 2048 or fewer in length.');
    expect(endpointUrlProblem('ftp://bot.example/', true)).toBe('The URL must start with https:// or http://.');
  });
});
