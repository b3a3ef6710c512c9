import { isUtf8 } from 'node:buffer';
import type { FastifyReply, FastifyRequest, FastifySchemaCompiler } from 'fastify';
import { ApiError, ApiErrors } from '../../core/errors.js';
import type { App } from '../../http/app-type.js';
import { apiErrorResponses } from '../../http/error.schemas.js';
import type { Services } from '../../deps.js';
import { executeGithubWebhook, executeSlackWebhook } from './compat-execute.service.js';
import { NOT_POSTED_HEADER } from './compat.js';
import { GithubBody, GithubHeaders, GithubQuery, SlackBody, SlackOk, SlackQuery } from './compat.schemas.js';
import { parseWait } from './execute.service.js';
import type { Webhook } from './webhooks.js';
import { RateLimitedBody, WebhookMessageBody, WebhookUrlParams } from './webhooks.schemas.js';

/**
 * POST /api/v1/webhooks/{id}/{token}/slack and …/github (issue #23): the payloads of tools that
 * post to Slack, and GitHub's webhook deliveries, posted as messages. They share the plain
 * execute route's gate (token check, SPEC §8 bucket, X-RateLimit-* on every answer) and its
 * payload rules, and add nothing to that route.
 */

type Gate = (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply | undefined>;

/** What the GitHub scope's parsers make of a body: the bytes GitHub signed, and the JSON they hold. */
interface SignedBody {
  raw: string;
  value: unknown;
}


const documentationOnly: FastifySchemaCompiler<unknown> = () => (value) => ({ value });
const errors = { ...apiErrorResponses(400, 401, 404), 429: RateLimitedBody };
const note = 'Same token check, rate limit (10 per 2 s per webhook, X-RateLimit-* headers), limits and impersonation rule as plain execute (docs/webhooks.md).';

function webhookOf(request: FastifyRequest): Webhook {
  const webhook = request.webhook;
  if (!webhook) throw new Error('webhookOf() called on a route without the webhook gate');
  return webhook;
}

/** A header value: printable ASCII only. */
function headerText(text: string): string {
  return text.replace(/[^\x20-\x7e]/g, '?').slice(0, 200);
}

function invalidJson(): ApiError {
  return new ApiError(400, 50109, 'The request body contains invalid JSON.');
}

/** Slack's legacy form encoding: `payload=<json>`. */
function slackBody(body: unknown): unknown {
  if (typeof body === 'object' && body !== null && typeof (body as Record<string, unknown>)['payload'] === 'string' && !('text' in body)) {
    try {
      return JSON.parse((body as Record<string, string>)['payload'] as string) as unknown;
    } catch {
      throw invalidJson();
    }
  }
  return body;
}

export function registerCompatibleExecuteApi(app: App, services: Services, gate: Gate): void {
  app.post(
    '/api/v1/webhooks/:id/:token/slack',
    {
      onRequest: gate,
      validatorCompiler: documentationOnly,
      schema: {
        tags: ['Webhooks'],
        summary: 'Execute a webhook with a Slack payload',
        description: `Slack's incoming-webhook payload (text in mrkdwn, username, icon_url, attachments, blocks) mapped to a message (docs/webhooks.md "Slack-compatible execute"). wait defaults to true; with wait=false the answer is Slack's 200 \`ok\` (text/plain). A payload that maps to nothing is 400 (50006) with the reason. ${note}`,
        params: WebhookUrlParams,
        querystring: SlackQuery,
        body: SlackBody,
        response: { 200: { description: 'The created message (wait true, the default), or `ok` as text/plain (wait=false)', content: { 'application/json': { schema: WebhookMessageBody }, 'text/plain': { schema: SlackOk } } }, ...errors },
      },
    },
    async (request, reply) => {
      const rawWait = (request.query as Record<string, unknown>)['wait'];
      // As at Discord, this route waits unless told not to.
      const wait = rawWait === undefined ? true : parseWait(rawWait);
      const record = await executeSlackWebhook(services, webhookOf(request), slackBody(request.body), wait);
      if (record === undefined) return reply.code(200).type('text/plain; charset=utf-8').send('ok');
      return record;
    },
  );

  void app.register(async (scope) => {
    // GitHub signs the body's bytes: keep them beside the parsed JSON (only in this scope).
    const parseJson = scope.getDefaultJsonParser('error', 'error');
    const parse = (request: FastifyRequest, raw: string, json: string, done: (error: Error | null, body?: SignedBody) => void) => {
      parseJson(request, json, (error: Error | null, value?: unknown) => (error ? done(invalidJson()) : done(null, { raw, value })));
    };
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
      const bytes = body as Buffer;
      if (!isUtf8(bytes)) return done(invalidJson(), undefined);
      const text = bytes.toString('utf8');
      parse(request, text, text, done);
    });
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (request, body, done) => {
      // GitHub's "application/x-www-form-urlencoded" content type: the JSON is the `payload` field.
      const payload = new URLSearchParams(body as string).get('payload');
      if (payload === null) return done(invalidJson(), undefined);
      parse(request, body as string, payload, done);
    });
    scope.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, _body, done) => done(ApiErrors.unsupportedMediaType(), undefined));

    scope.post(
      '/api/v1/webhooks/:id/:token/github',
      {
        onRequest: gate,
        validatorCompiler: documentationOnly,
        schema: {
          tags: ['Webhooks'],
          summary: 'Execute a webhook with a GitHub delivery',
          description: `Usable as a GitHub webhook's Payload URL (content type application/json or form). X-GitHub-Event decides the rendering (docs/webhooks.md "GitHub-compatible execute"): push, pull_request, reviews and comments, issues, create/delete, fork, watch, release, member, public, check_run, check_suite, discussion, workflow_run. ping, unknown events and actions with nothing worth posting answer 204 with the reason in X-Gatehouse-Not-Posted. With a GitHub secret set on the webhook's settings page, X-Hub-Signature-256 must match (401 otherwise). ${note}`,
          params: WebhookUrlParams,
          querystring: GithubQuery,
          headers: GithubHeaders,
          body: GithubBody,
          response: {
            200: WebhookMessageBody,
            204: { type: 'null', description: 'Posted (wait absent or false), or nothing posted: then X-Gatehouse-Not-Posted says why' },
            ...errors,
            ...apiErrorResponses(415),
          },
        },
      },
      async (request, reply) => {
        const wait = parseWait((request.query as Record<string, unknown>)['wait']);
        const body = request.body as SignedBody | undefined;
        const event = request.headers['x-github-event'];
        const signature = request.headers['x-hub-signature-256'];
        const outcome = await executeGithubWebhook(services, webhookOf(request), {
          event: typeof event === 'string' ? event : undefined,
          signature: typeof signature === 'string' ? signature : undefined,
          rawBody: body?.raw ?? '',
          body: body?.value,
          wait,
        });
        if (!outcome.posted) return reply.code(204).header(NOT_POSTED_HEADER, headerText(outcome.reason)).send(null);
        if (outcome.message === undefined) return reply.code(204).send(null);
        return outcome.message;
      },
    );
  });
}
