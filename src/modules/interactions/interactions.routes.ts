import type { FastifySchemaCompiler } from 'fastify';
import { ANONYMOUS } from '../../core/acting.js';
import { requestActing } from '../../http/acting.js';
import type { App } from '../../http/app-type.js';
import { apiErrorResponses } from '../../http/error.schemas.js';
import type { Services } from '../../deps.js';
import { rateLimitedHeaders, rateLimitHeaders } from '../webhooks/webhook-rate-limit.js';
import { RateLimitedBody } from '../webhooks/webhooks.schemas.js';
import { answerByCallback } from './followups.service.js';
import { InteractionCallbackBody, InteractionCallbackParams } from './interactions.schemas.js';

/** The schema documents the body; checkAnswer (interactions.ts) checks it and names what is wrong. */
const documentationOnly: FastifySchemaCompiler<unknown> = () => (value) => ({ value });

/**
 * Discord's "Create Interaction Response" (issue #40 §2): the interaction token in the path is the
 * only credential, no bot token: the caller is anonymous until the token names the interaction,
 * whose app's bot then posts the answer.
 */
export function registerInteractionsApi(app: App, services: Services): void {
  app.post(
    '/api/v1/interactions/:id/:token/callback',
    {
      validatorCompiler: documentationOnly,
      schema: {
        tags: ['Interactions'],
        summary: 'Answer an interaction',
        description:
          'The answer to an interaction sent by HTTP instead of in the response to Gatehouse’s request: type 4 (a message; data.flags 64 for the invoker only) or type 5 (deferred: the bot’s “thinking” message until …/messages/@original is edited). Once per interaction: a second answer is 400 (40060). An unknown or expired (15 minutes) interaction is 404 (10062). Every answer carries X-RateLimit-Limit, -Remaining, -Reset, -Reset-After and -Bucket: 10 requests per 2 s per app and channel, shared with the follow-up routes.',
        params: InteractionCallbackParams,
        body: InteractionCallbackBody,
        response: { 204: { type: 'null', description: 'Answered' }, ...apiErrorResponses(400, 404), 429: RateLimitedBody },
      },
    },
    async (request, reply) => {
      const { id, token } = request.params as { id: string; token: string };
      await answerByCallback(services, requestActing(request, services.clock, ANONYMOUS), id, token, request.body as unknown, request.ip, (limit) => {
        reply.headers(rateLimitHeaders(limit.decision, limit.bucket));
        if (!limit.decision.allowed) reply.headers(rateLimitedHeaders(limit.scope));
      });
      return reply.code(204).send(null);
    },
  );
}
