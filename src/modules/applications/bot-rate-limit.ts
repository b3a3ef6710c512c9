/**
 * Rate limits of the bot routes (issue #40 §4, DESIGN §1), pure: the rules, the bucket keys and
 * names. Every request with bot credentials spends two buckets, Discord's model: the bot's global
 * bucket (50 requests per second, Discord's documented global limit) and the bucket of its route,
 * per bot and per major parameter (the channel, server or webhook in the path, as Discord keys
 * them), so a busy channel does not slow the bot's other channels. docs/bots.md states them for
 * users. Tested by test/http/bot-rate-limit.test.ts.
 */
import { hash } from 'node:crypto';
import type { BucketRule } from '../../rate-limit/bucket.js';

/** Discord: "All bots can make up to 50 requests per second to our API", across every route. */
export const BOT_GLOBAL_RULE: BucketRule = { limit: 50, windowMs: 1000, neverReset: true };

/** The kinds of route buckets, each with its rule (docs/bots.md "Rate limits"). */
export const BOT_ROUTE_RULES = {
  /** Discord's long-standing 5 messages per 5 s per channel. */
  'message-create': { limit: 5, windowMs: 5000, neverReset: true },
  'message-edit': { limit: 5, windowMs: 5000, neverReset: true },
  /** Discord lets moderation bots delete faster than they post: 5 per second per channel. */
  'message-delete': { limit: 5, windowMs: 1000, neverReset: true },
  /**
   * Every other change (webhooks, commands, DMs): 50 per 10 s, so a burst the global bucket allows
   * (e.g. 50 concurrent webhook creations racing for a channel's 10 places) reaches the service.
   */
  write: { limit: 50, windowMs: 10_000, neverReset: true },
  /** Reads: 50 per 5 s per route and channel or server, enough to page a history at 10 pages a second. */
  read: { limit: 50, windowMs: 5000, neverReset: true },
} as const satisfies Record<string, BucketRule>;

export type BotRouteKind = keyof typeof BOT_ROUTE_RULES;

/** Which bucket kind a route spends: the message routes by method, the rest by whether they read. */
export function botRouteKind(method: string, routeUrl: string): BotRouteKind {
  const message = /\/channels\/:channelId\/messages(\/:messageId)?$/.test(routeUrl);
  if (method === 'GET' || method === 'HEAD') return 'read';
  if (message && method === 'POST') return 'message-create';
  if (message && method === 'PATCH') return 'message-edit';
  if (message && method === 'DELETE') return 'message-delete';
  return 'write';
}

/**
 * Discord's major parameter: the channel, server or webhook the path names ('' for a route that
 * names none, e.g. /users/{id}), so each of them has buckets of its own.
 */
export function majorParameter(routeUrl: string, params: unknown): string {
  const p = (params ?? {}) as Record<string, unknown>;
  const value = p['channelId'] ?? p['guildId'] ?? (routeUrl.startsWith('/api/v1/webhooks/') ? p['id'] : undefined);
  return typeof value === 'string' ? value : '';
}

export function botGlobalBucketKey(botUserId: string): string {
  return `bot:${botUserId}:global`;
}

export function botRouteBucketKey(botUserId: string, method: string, routeUrl: string, major: string): string {
  return `bot:${botUserId}:${method} ${routeUrl}:${major}`;
}

/**
 * X-RateLimit-Bucket: an opaque name of the route's bucket, the same for every bot and major
 * parameter (as Discord's: clients key their queues by bucket and major parameter together).
 */
export function botBucketName(method: string, routeUrl: string): string {
  return hash('sha256', `bot-route:${method} ${routeUrl}`, 'hex').slice(0, 32);
}
