import type { FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import type { Acting } from '../../core/acting.js';
import type { Deps } from '../../deps.js';
import { RateLimitedError } from '../../core/errors.js';
import { actorActing } from '../../http/acting.js';
import { rateLimitHeaders } from '../webhooks/webhook-rate-limit.js';
import { spendBotRequest } from './bot-rate-limit.service.js';
import { authenticateBot, botActor, type BotPrincipal } from './bots.service.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The application and bot account of a request with valid bot credentials (requireBot). */
    bot: BotPrincipal | undefined;
  }
}

/**
 * Bot authentication for /api/v1 routes (DESIGN §1: `Authorization: Bot <token>`), as a Fastify
 * onRequest hook: `{ onRequest: requireBot(services) }`, then `botOf(request)` in the handler.
 * Anything else — no header, a Bearer token, an unknown or reset token — is 401 `{code: 0}`.
 * It runs before the body is read, so a request without valid credentials is refused as 401
 * whatever its body, and an unauthenticated caller never gets validation feedback. An accepted bot
 * then spends its global and route buckets (bot-rate-limit.ts): every answer carries the route
 * bucket's X-RateLimit-* headers, and a full bucket is 429 before anything is read.
 */
export function requireBot(deps: Deps): onRequestAsyncHookHandler {
  return async function bot(request, reply) {
    const principal = await authenticateBot(deps, request.headers.authorization);
    request.bot = principal;
    // Issue #40 §4: every bot route answers Discord's rate-limit headers (bot-rate-limit.ts).
    const spent = await spendBotRequest(deps, principal, request.method, request.routeOptions.url ?? request.url, request.params);
    if (spent.route) reply.headers(rateLimitHeaders(spent.route.decision, spent.route.bucket));
    if (spent.refused) {
      // Discord: X-RateLimit-Scope says whose bucket ran out; a global refusal adds X-RateLimit-Global.
      reply.header('x-ratelimit-scope', spent.refused.scope);
      if (spent.refused.scope === 'global') reply.header('x-ratelimit-global', 'true');
      throw new RateLimitedError(spent.refused.retryAfterMs, 'You are being rate limited.', spent.refused.scope === 'global');
    }
  };
}

/** The bot the onRequest hook accepted for this request. */
export function botOf(request: FastifyRequest): BotPrincipal {
  const bot = request.bot;
  if (!bot) throw new Error('botOf() called on a route without requireBot()');
  return bot;
}

/** The accepted bot acting in this request (issue #37 §1): its actor, address, request id and `X-Audit-Log-Reason`. */
export function botActing(request: FastifyRequest, clock: { now(): number }): Acting {
  return actorActing(request, clock, botActor(botOf(request)));
}
