import { isUtf8 } from 'node:buffer';
import type { FastifyReply, FastifyRequest, FastifySchemaCompiler } from 'fastify';
import { addFieldError, ApiError, ApiErrors, type ErrorTree } from '../../core/errors.js';
import { CONTROL_CHARACTER_ERROR, findForbiddenText } from '../../core/text.js';
import type { App } from '../../http/app-type.js';
import { JSON_DEPTH_MAX, jsonNestsDeeperThan } from '../../http/body-limits.js';
import { requestActing } from '../../http/acting.js';
import { apiErrorResponses } from '../../http/error.schemas.js';
import type { Services } from '../../deps.js';
import { MESSAGE_BODY_LIMIT } from '../messages/message-body-limit.js';
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
 * payload rules, and add nothing to that route. Issue #36 §4: their bodies are bounded like the
 * plain route's (size, JSON depth, and the control-character rule inside Slack's `payload=`).
 */

type Gate = (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply | undefined>;

/** The gates of these routes: /github checks a signature itself; /slack writes unsigned (issue #36 §2). */
interface CompatGates {
  signed: Gate;
  unsigned: Gate;
}

/**
 * Issue #36 §4: the most of a GitHub delivery read. GitHub sends up to 25 MB, more than anything
 * posted needs: the renderer keeps a title, a few commits and a clipped body. The largest
 * deliveries it renders in full carry two texts of GitHub's 65,536-character limit (an issue or
 * pull request body and a comment), at most 6 bytes each in JSON (`\u001f`): 768 KiB, and 256 KiB
 * for the rest of the document. GATEHOUSE_BODY_LIMIT_BYTES caps it like every other limit.
 */
export const GITHUB_BODY_LIMIT = 1024 * 1024;

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

/** JSON text nested deeper than the plain route accepts (issue #21 §1) is refused as invalid JSON, as there. */
function parseBoundedJson(text: string): unknown {
  if (jsonNestsDeeperThan(Buffer.from(text, 'utf8'), JSON_DEPTH_MAX)) throw invalidJson();
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw invalidJson();
  }
}

/**
 * Slack's legacy form encoding: `payload=<json>`. The JSON is parsed here, after the app's parsers
 * and text rule ran on the form, so its depth and the control-character rule (issue #21 §5; a
 * `\u0000` escape is plain text in the form) are checked here too (issue #36 §4).
 */
function slackBody(body: unknown): unknown {
  if (typeof body === 'object' && body !== null && typeof (body as Record<string, unknown>)['payload'] === 'string' && !('text' in body)) {
    const value = parseBoundedJson((body as Record<string, string>)['payload'] as string);
    const forbidden = findForbiddenText(value);
    if (forbidden.length > 0) {
      const tree: ErrorTree = {};
      for (const path of forbidden) addFieldError(tree, ['payload', ...path], CONTROL_CHARACTER_ERROR);
      throw ApiErrors.invalidFormBody(tree);
    }
    return value;
  }
  return body;
}

export function registerCompatibleExecuteApi(app: App, services: Services, gates: CompatGates): void {
  // Issue #36 §4: Slack's text is at most 40,000 characters (12 bytes each escaped: 469 KiB), and
  // what is posted is a message: the plain route's limit covers both.
  const slackBodyLimit = Math.min(MESSAGE_BODY_LIMIT, services.config.bodyLimit);
  const githubBodyLimit = Math.min(GITHUB_BODY_LIMIT, services.config.bodyLimit);
  app.post(
    '/api/v1/webhooks/:id/:token/slack',
    {
      onRequest: gates.unsigned,
      bodyLimit: slackBodyLimit,
      validatorCompiler: documentationOnly,
      schema: {
        tags: ['Webhooks'],
        summary: 'Execute a webhook with a Slack payload',
        description: `Slack's incoming-webhook payload (text in mrkdwn, username, icon_url, attachments, blocks) mapped to a message (docs/webhooks.md "Slack-compatible execute"). wait defaults to true; with wait=false the answer is Slack's 200 \`ok\` (text/plain). A payload that maps to nothing is 400 (50006) with the reason. ${note}`,
        params: WebhookUrlParams,
        querystring: SlackQuery,
        body: SlackBody,
        response: {
          200: { description: 'The created message (wait true, the default), or `ok` as text/plain (wait=false)', content: { 'application/json': { schema: WebhookMessageBody }, 'text/plain': { schema: SlackOk } } },
          ...errors,
          ...apiErrorResponses(403, 413),
        },
      },
    },
    async (request, reply) => {
      const rawWait = (request.query as Record<string, unknown>)['wait'];
      // As at Discord, this route waits unless told not to.
      const wait = rawWait === undefined ? true : parseWait(rawWait);
      const webhook = webhookOf(request);
      const record = await executeSlackWebhook(services, requestActing(request, services.clock, { kind: 'webhook', id: webhook.id }), webhook, slackBody(request.body), wait);
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
      // Issue #36 §4: the plain route's depth bound (http/json-body.ts), before JSON.parse.
      if (!isUtf8(bytes) || jsonNestsDeeperThan(bytes, JSON_DEPTH_MAX)) return done(invalidJson(), undefined);
      const text = bytes.toString('utf8');
      parse(request, text, text, done);
    });
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (request, body, done) => {
      // GitHub's "application/x-www-form-urlencoded" content type: the JSON is the `payload` field.
      const payload = new URLSearchParams(body as string).get('payload');
      if (payload === null || jsonNestsDeeperThan(Buffer.from(payload, 'utf8'), JSON_DEPTH_MAX)) return done(invalidJson(), undefined);
      parse(request, body as string, payload, done);
    });
    scope.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, _body, done) => done(ApiErrors.unsupportedMediaType(), undefined));

    scope.post(
      '/api/v1/webhooks/:id/:token/github',
      {
        onRequest: gates.signed,
        bodyLimit: githubBodyLimit,
        validatorCompiler: documentationOnly,
        schema: {
          tags: ['Webhooks'],
          summary: 'Execute a webhook with a GitHub delivery',
          description: `Usable as a GitHub webhook's Payload URL (content type application/json or form). X-GitHub-Event decides the rendering (docs/webhooks.md "GitHub-compatible execute"): push, pull_request, reviews and comments, issues, create/delete, fork, watch, release, member, public, check_run, check_suite, discussion, workflow_run. ping, unknown events and actions with nothing worth posting answer 204 with the reason in X-Gatehouse-Not-Posted. With a GitHub secret set on the webhook's settings page, X-Hub-Signature-256 must match (401 otherwise), X-GitHub-Delivery is required (400), a delivery id or signed body already received within 7 days is a replay (409, nothing posted), and this is the only route that posts, edits or deletes the webhook's messages. Bodies up to 1 MiB. ${note}`,
          params: WebhookUrlParams,
          querystring: GithubQuery,
          headers: GithubHeaders,
          body: GithubBody,
          response: {
            200: WebhookMessageBody,
            204: { type: 'null', description: 'Posted (wait absent or false), or nothing posted: then X-Gatehouse-Not-Posted says why' },
            ...errors,
            ...apiErrorResponses(409, 413, 415),
          },
        },
      },
      async (request, reply) => {
        const wait = parseWait((request.query as Record<string, unknown>)['wait']);
        const body = request.body as SignedBody | undefined;
        const event = request.headers['x-github-event'];
        const signature = request.headers['x-hub-signature-256'];
        const deliveryId = request.headers['x-github-delivery'];
        const webhook = webhookOf(request);
        const outcome = await executeGithubWebhook(services, requestActing(request, services.clock, { kind: 'webhook', id: webhook.id }), webhook, {
          event: typeof event === 'string' ? event : undefined,
          signature: typeof signature === 'string' ? signature : undefined,
          deliveryId: typeof deliveryId === 'string' ? deliveryId : undefined,
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
