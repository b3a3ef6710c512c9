import type { FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import type { Acting } from '../../core/acting.js';
import type { Deps } from '../../deps.js';
import { actorActing } from '../../http/acting.js';
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
 * whatever its body, and an unauthenticated caller never gets validation feedback.
 */
export function requireBot(deps: Deps): onRequestAsyncHookHandler {
  return async function bot(request) {
    request.bot = await authenticateBot(deps, request.headers.authorization);
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
