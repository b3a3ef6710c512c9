import type { BucketDecision } from '../../rate-limit/bucket.js';
import type { Deps } from '../../deps.js';
import { BOT_GLOBAL_RULE, BOT_ROUTE_RULES, botBucketName, botGlobalBucketKey, botRouteBucketKey, botRouteKind, majorParameter } from './bot-rate-limit.js';
import type { BotPrincipal } from './bots.service.js';

/** What a bot request spent: the route bucket's decision for the headers, and which bucket refused, if one did. */
export interface BotSpend {
  /** The route bucket as it stands after this request (absent when the global bucket refused first). */
  route: { decision: BucketDecision; bucket: string } | undefined;
  refused: { scope: 'global' | 'user'; retryAfterMs: number } | undefined;
}

/**
 * Spends one request of the bot's global bucket, then one of its route bucket (bot-rate-limit.ts).
 * A request the global bucket refuses spends nothing of the route's. Never throws for a full
 * bucket: the caller answers 429 with the headers.
 */
export async function spendBotRequest(deps: Deps, bot: BotPrincipal, method: string, routeUrl: string, params: unknown): Promise<BotSpend> {
  const now = deps.clock.now();
  const global = await deps.buckets.take(botGlobalBucketKey(bot.botUserId), BOT_GLOBAL_RULE, now);
  if (!global.allowed) return { route: undefined, refused: { scope: 'global', retryAfterMs: global.resetAfterMs } };
  const rule = BOT_ROUTE_RULES[botRouteKind(method, routeUrl)];
  const decision = await deps.buckets.take(botRouteBucketKey(bot.botUserId, method, routeUrl, majorParameter(routeUrl, params)), rule, now);
  const route = { decision, bucket: botBucketName(method, routeUrl) };
  return { route, refused: decision.allowed ? undefined : { scope: 'user', retryAfterMs: decision.resetAfterMs } };
}
