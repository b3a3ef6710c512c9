import type { FastifySchemaCompiler } from 'fastify';
import { ANONYMOUS } from '../../core/acting.js';
import { requestActing } from '../../http/acting.js';
import type { App } from '../../http/app-type.js';
import { apiErrorResponses } from '../../http/error.schemas.js';
import type { Services } from '../../deps.js';
import { rateLimitedHeaders, rateLimitHeaders } from '../webhooks/webhook-rate-limit.js';
import { RateLimitedBody } from '../webhooks/webhooks.schemas.js';
import { invalidField } from '../../core/errors.js';
import { answerByCallback, presentCallbackResponse } from './followups.service.js';
import { InteractionCallbackBody, InteractionCallbackParams, InteractionCallbackQuery, InteractionCallbackResponseBody } from './interactions.schemas.js';

/** Discord's boolean query values; undefined when absent, else 50035 at the parameter. */
function queryFlag(value: unknown, name: string): boolean | undefined {
  if (value === undefined) return undefined;
  if (value === 'true' || value === '1' || value === 'True') return true;
  if (value === 'false' || value === '0' || value === 'False') return false;
  throw invalidField([name], 'BASE_TYPE_BAD_TYPE', 'Must be either true or false.');
}

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
          'The answer to an interaction sent by HTTP instead of in the response to Gatehouse’s request: type 4 (a message under the follow-ups’ rules: content and/or embeds; data.flags 64 for the invoker only) or type 5 (deferred: the bot’s “thinking” message until …/messages/@original is edited). Once per interaction: a second answer is 400 (40060). An unknown or expired (15 minutes) interaction is 404 (10062). Every answer carries X-RateLimit-Limit, -Remaining, -Reset, -Reset-After and -Bucket: 10 requests per 2 s per app and channel, shared with the follow-up routes. 204 without a body; with `with_response=true`, 200 and Discord’s interaction callback response: `interaction` (id, type, response_message_id, response_message_loading, response_message_ephemeral) and `resource` (the callback type and the message it posted, with flags 64 when it is ephemeral).',
        params: InteractionCallbackParams,
        querystring: InteractionCallbackQuery,
        body: InteractionCallbackBody,
        response: { 200: InteractionCallbackResponseBody, 204: { type: 'null', description: 'Answered' }, ...apiErrorResponses(400, 404), 429: RateLimitedBody },
      },
    },
    async (request, reply) => {
      const { id, token } = request.params as { id: string; token: string };
      // Read before the answer is used: a bad value changes nothing.
      const withResponse = queryFlag((request.query as { with_response?: unknown }).with_response, 'with_response') === true;
      const answered = await answerByCallback(services, requestActing(request, services.clock, ANONYMOUS), id, token, request.body as unknown, request.ip, (limit) => {
        reply.headers(rateLimitHeaders(limit.decision, limit.bucket));
        if (!limit.decision.allowed) reply.headers(rateLimitedHeaders(limit.scope));
      });
      if (!withResponse) return reply.code(204).send(null);
      // The message is Discord's type 20 with interaction_metadata, written as it is (as the follow-up routes do).
      return reply.code(200).type('application/json').serializer(JSON.stringify).send(await presentCallbackResponse(services, answered));
    },
  );
}
