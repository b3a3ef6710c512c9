import { Type } from '@sinclair/typebox';
import { GITHUB_SECRET_MAX } from './compat.js';

/**
 * Schemas of the Slack- and GitHub-compatible execute routes (issue #23), for the OpenAPI
 * document. The bodies are mapped by hand (slack-payload.ts, github-events.ts), never by AJV.
 */

export const SlackBody = Type.Object(
  {
    text: Type.Optional(Type.String({ description: "Slack mrkdwn; converted to Gatehouse markdown. With blocks, Slack's notification fallback only" })),
    username: Type.Optional(Type.String({ description: "The message's author name (the impersonation rule of execute applies)" })),
    icon_url: Type.Optional(Type.String({ description: "The message's avatar (https)" })),
    attachments: Type.Optional(Type.Array(Type.Object({}, { additionalProperties: true }), { description: 'Slack attachments, each an embed (docs/webhooks.md)' })),
    blocks: Type.Optional(Type.Array(Type.Object({}, { additionalProperties: true }), { description: 'Block Kit: section, header, context, divider, image become embeds' })),
  },
  { additionalProperties: true, description: "Slack's incoming-webhook payload" },
);

export const SlackQuery = Type.Object({
  wait: Type.Optional(
    Type.String({
      description: "Defaults to true here: 200 with the created message. false (0, False) answers Slack's own 200 text/plain `ok`",
      enum: ['true', 'false', '1', '0', 'True', 'False'],
    }),
  ),
});

export const SlackOk = Type.String({ description: "Slack's success answer `ok` (text/plain), with wait=false" });

export const GithubBody = Type.Object({}, { additionalProperties: true, description: "A GitHub webhook delivery's payload (application/json, or form-urlencoded `payload=`)" });

export const GithubHeaders = Type.Object(
  {
    'x-github-event': Type.Optional(Type.String({ description: 'The event name (push, pull_request, …): decides the rendering' })),
    'x-hub-signature-256': Type.Optional(Type.String({ description: "sha256=HMAC of the body with the webhook's GitHub secret; required when one is set" })),
    'x-github-delivery': Type.Optional(Type.String({ description: "GitHub's delivery GUID; required when the webhook has a GitHub secret, and refused (409) when seen within the last 7 days" })),
  },
  { additionalProperties: true },
);

export const GithubQuery = Type.Object({
  wait: Type.Optional(
    Type.String({ description: 'true answers 200 with the created message; absent or false, 204', enum: ['true', 'false', '1', '0', 'True', 'False'] }),
  ),
});

/**
 * The GitHub secret form of a webhook's settings (Integrations pages). The schema's cap is well
 * above GITHUB_SECRET_MAX so that a too-long secret reaches the service and its message is shown
 * beside the form; the cap only bounds what is read.
 */
export const GithubSecretFormBody = Type.Object({ githubSecret: Type.Optional(Type.String({ maxLength: GITHUB_SECRET_MAX * 16 })), _csrf: Type.Optional(Type.String()) });
