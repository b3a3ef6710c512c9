import type { Acting, Who } from '../../core/acting.js';
import type { PersonActor } from '../../core/actor.js';
import type { Deps } from '../../deps.js';
import { getPerson } from '../accounts/accounts.service.js';
import type { Application } from '../applications/applications.js';
import { findApplicationByClientId } from '../applications/applications.service.js';
import { permissionLabelList } from '../applications/installs.js';
import { installConsentView, planServerInstall, writeInstall, type ServerInstallPlan } from '../applications/installs.service.js';
import type { ConsentRequest } from './authorize.js';
import type { ConsentView } from './authorize.page.js';
import { delegatedView } from './delegation.js';
import { authorizeUrl, requestFields } from './authorize-response.js';
import { AUTHORIZE_PATH } from './metadata.js';
import {
  errorRedirect,
  installProblem,
  openIdStep,
  rawAuthorizeUrl,
  refusedPage,
  validateClient,
  validateRequest,
  type AuthorizeOutcome,
  type RefusedPage,
} from './authorize-steps.js';
import { issueCode } from './codes.service.js';
import { findConsentScopes } from './consents.repository.js';
import { incomingWebhookScopeProblem, wantsIncomingWebhook } from './incoming-webhook.js';
import { chosenWebhookChannel, webhookConsent } from './incoming-webhook.service.js';
import { coversScopes, describeScope, INSTALL_SCOPES } from '../../core/scopes.js';
import { isRegisteredApplication } from '../client-registration/client-registration.js';
import { isUrlClientId, metadataHost } from '../client-metadata/client-metadata.js';

export type { AuthorizeOutcome } from './authorize-steps.js';

export interface AuthorizeRequestInput {
  /** The parsed query string. */
  query: unknown;
  /** When they signed in to this session (OpenID Connect auth_time, max_age). */
  signedInAt?: number | undefined;
  /** The session cookie: how that sign-in was made (amr, issue #38 §4). */
  sessionToken?: string | undefined;
  /** The request's path and query exactly as received, to come back to after sign-in. */
  requestUrl: string;
}

/**
 * GET /app/oauth2/authorize (SPEC §2.1, issue #3): validate, make sure someone is signed in,
 * then either show the consent screen, or — when every requested scope was granted before and
 * `prompt` does not force the screen — issue a code at once. `acting` is the browser's request:
 * its signed-in person, or nobody yet.
 */
export async function startAuthorization(deps: Deps, acting: Acting<Who>, input: AuthorizeRequestInput): Promise<AuthorizeOutcome> {
  const client = await validateClient(deps, input.query);
  if ('kind' in client) return client;
  const signedIn = personActing(acting);
  const userId = signedIn?.actor.id;
  const openId = await openIdStep(deps, client, input.query, { userId, signedInAt: input.signedInAt, sessionToken: input.sessionToken }, input.requestUrl);
  if (openId.outcome) return openId.outcome;
  if (signedIn === undefined || userId === undefined) return { kind: 'sign-in', next: input.requestUrl };
  const checked = validateRequest(client);
  if (!checked.ok) return errorRedirect(deps, client, checked.error, checked.description);
  const request = checked.request;
  // Issue #41: access to another API is asked every time (its consent is not remembered).
  if (!request.plain && request.resource !== undefined) {
    if (request.prompt === 'none') return errorRedirect(deps, client, 'consent_required', 'access to a resource server is confirmed on the consent screen every time');
    return { kind: 'consent', view: await consentView(deps, client.app, request, input.requestUrl, userId) };
  }
  // Issue #23: webhook.incoming always shows its channel picker, whatever prompt says.
  if (wantsIncomingWebhook(request)) {
    const problem = incomingWebhookScopeProblem(request.scopes);
    if (problem) return errorRedirect(deps, client, 'invalid_scope', problem);
    return { kind: 'consent', view: await consentView(deps, client.app, request, input.requestUrl, userId) };
  }
  if (request.install !== undefined || request.plain) {
    // Issue #4: the consent for an install is never skipped, whatever prompt says.
    const problem = installProblem(deps, client, request, userId);
    if (problem) return problem;
    return { kind: 'consent', view: await consentView(deps, client.app, request, input.requestUrl, userId, openId.formFields) };
  }

  const remembered = await findConsentScopes(deps.db, userId, client.app.id);
  // Issue #41 §3: a metadata document's client is public and unreviewed, so it is asked every time.
  const covered = remembered !== undefined && coversScopes(remembered, request.scopes) && identityAssured(client.app, request.redirectUri) && !isUrlClientId(request.clientId);
  if (request.prompt === 'none') {
    // OpenID Connect Core §3.1.2.6: no screen may be shown, so missing consent is an error.
    if (!covered) return errorRedirect(deps, client, 'consent_required', 'the person has not yet authorized this application for these scopes');
    return issueCode(deps, signedIn, { app: client.app, request, remembered, openId: openId.facts });
  }
  if (covered && request.prompt !== 'consent') return issueCode(deps, signedIn, { app: client.app, request, remembered, openId: openId.facts });
  return { kind: 'consent', view: await consentView(deps, client.app, request, input.requestUrl, userId, openId.formFields) };
}

/**
 * Whether a remembered consent may skip the screen for this request (RFC 8252 §8.6, issue #21 §5):
 * only when the client's identity is assured. A confidential client proves it at the token
 * endpoint; a public client only through an https redirect URI, which its domain's owner alone
 * can receive. Any program on the machine can listen on a loopback port or claim a private-use
 * scheme, so a public client redirecting there is shown the consent screen every time.
 */
function identityAssured(app: Application, redirectUri: string): boolean {
  return app.confidential || redirectUri.startsWith('https://');
}

export interface AuthorizeDecisionInput {
  /** The parsed form body: the hidden fields of the consent form, never trusted. */
  body: unknown;
  /** When they signed in to this session (OpenID Connect auth_time). */
  signedInAt?: number | undefined;
  /** The session cookie: how that sign-in was made (amr, issue #38 §4). */
  sessionToken?: string | undefined;
  decision: unknown;
}

/**
 * POST /app/oauth2/authorize: the consent form's answer. Everything is validated again exactly as
 * on GET; the route's CSRF check has already passed (OAUTH-CHECKLIST A14). `acting` is the
 * browser's request: only its signed-in person decides (anyone else is sent to sign in).
 * Issue #37 §2: an approval that issues a code records grant.created with the granted scopes.
 */
export async function decideAuthorization(deps: Deps, acting: Acting<Who>, input: AuthorizeDecisionInput): Promise<AuthorizeOutcome> {
  const client = await validateClient(deps, input.body);
  if ('kind' in client) return client;
  const signedIn = personActing(acting);
  if (signedIn === undefined) return { kind: 'sign-in', next: rawAuthorizeUrl(client.params) };
  const userId = signedIn.actor.id;
  if (input.decision !== 'authorize' && input.decision !== 'cancel') return refusedPage(400, 'That did not work', 'Choose Authorize or Cancel on the consent screen.');
  const checked = validateRequest(client);
  if (!checked.ok) return errorRedirect(deps, client, checked.error, checked.description);
  const request = checked.request;
  // RFC 6749 §4.1.2.1, OAUTH-CHECKLIST A9: nothing is stored when the person declines.
  if (input.decision === 'cancel') {
    if (client.target === undefined) return { kind: 'declined', application: { id: client.app.id, name: client.app.name } };
    return errorRedirect(deps, client, 'access_denied', 'the person declined to authorize the application');
  }
  const problem = installProblem(deps, client, request, userId);
  if (problem) return problem;
  // Issue #23: the channel of webhook.incoming, checked now; the exchange creates the webhook.
  const webhookScopeProblem = incomingWebhookScopeProblem(request.scopes);
  if (webhookScopeProblem) return errorRedirect(deps, client, 'invalid_scope', webhookScopeProblem);
  const webhook = !request.plain && wantsIncomingWebhook(request) ? await chosenWebhookChannel(deps, userId, input.body) : undefined;
  if (webhook && 'kind' in webhook) return webhook;
  const webhookChannelId = webhook?.channelId;
  const plan = request.install?.bot ? await botInstallPlan(deps, client.app, request, userId, input.body) : undefined;
  if (plan && 'kind' in plan) return plan;
  if (request.plain) return completePlainInstall(deps, signedIn, client.app, request.install.commands, plan);
  const openId = await openIdStep(deps, client, input.body, { userId, signedInAt: input.signedInAt, sessionToken: input.sessionToken }, undefined);
  if (openId.outcome) return openId.outcome;
  const remembered = await findConsentScopes(deps.db, userId, client.app.id);
  return issueCode(deps, signedIn, { app: client.app, request, remembered, plan, webhookChannelId, openId: openId.facts, approved: true });
}

/** The acting person, or undefined when nobody is signed in. */
function personActing(acting: Acting<Who>): Acting<PersonActor> | undefined {
  return acting.actor.kind === 'person' ? (acting as Acting<PersonActor>) : undefined;
}

/** The bot install the consent form asks for (issue #4; installs.service.ts decides), or the page saying why not. */
async function botInstallPlan(deps: Deps, app: Application, request: ConsentRequest, userId: string, body: unknown): Promise<ServerInstallPlan | RefusedPage> {
  const ticked = body !== null && typeof body === 'object' ? (body as Record<string, unknown>)['permission'] : undefined;
  const planned = request.install ? await planServerInstall(deps, app, request.install, userId, ticked) : ({ ok: false, problem: 'no-server' } as const);
  if (planned.ok) return planned.plan;
  if (planned.problem === 'no-server') return refusedPage(400, 'Choose a server', 'Choose the server to add the bot to, then press Authorize. Nothing was added.');
  // Issue #36 §5: installing again would rewrite a role out of the person's reach.
  if (planned.problem === 'out-of-reach') {
    return refusedPage(
      403,
      'You cannot change this bot’s permissions',
      `${app.name} is already in that server, and its role holds permissions you do not have (${planned.missing.join(', ')}). Only someone who holds them can install it again. Nothing was changed.`,
    );
  }
  return refusedPage(403, 'You cannot add bots to that server', 'Adding a bot to a server needs the Manage server permission there. Nothing was added.');
}

/** A plain install (no code): the writes, then the confirmation page naming the server. */
async function completePlainInstall(deps: Deps, acting: Acting<PersonActor>, app: Application, commands: boolean, plan: ServerInstallPlan | undefined): Promise<AuthorizeOutcome> {
  const userId = acting.actor.id;
  await writeInstall(deps, acting, plan ? { kind: 'server', plan } : commands ? { kind: 'user', applicationId: app.id, userId } : undefined);
  return {
    kind: 'installed',
    view: {
      application: { id: app.id, name: app.name },
      kind: plan ? 'bot' : 'user',
      ...(plan?.serverName !== undefined ? { server: { id: plan.serverId, name: plan.serverName } } : {}),
      granted: plan ? permissionLabelList(plan.granted) : [],
      commands,
    },
  };
}

async function consentView(deps: Deps, app: Application, request: ConsentRequest, requestUrl: string, userId: string, openIdFields: [string, string][] = []): Promise<ConsentView> {
  const owner = await getPerson(deps, app.ownerId);
  const install = request.install ? await installConsentView(deps, request.install, userId) : undefined;
  const redirect = request.plain ? request.redirect : request;
  const resource = request.plain ? undefined : request.resource;
  // Issue #41: a resource's scopes are described by the app that serves it.
  const server = resource ? (resource.applicationId === app.id ? app : await findApplicationByClientId(deps, resource.applicationId)) : undefined;
  const describe = (name: string) => (resource ? (resource.scopes.find((s) => s.name === name)?.description ?? name) : describeScope(name));
  return {
    application: {
      id: app.id,
      name: app.name,
      description: app.description,
      ownerUsername: owner?.username ?? null,
      registered: isRegisteredApplication(app),
      ...(isUrlClientId(request.clientId) ? { metadataDocument: { url: request.clientId, host: metadataHost(request.clientId) } } : {}),
    },
    scopes: request.scopes.filter((name) => install === undefined || !INSTALL_SCOPES.includes(name)).map((name) => ({ name, description: describe(name) })),
    ...(resource ? { resource: { identifier: resource.identifier, applicationName: server?.name ?? 'another application' } } : {}),
    ...(resource ? delegatedView(resource, server?.name) : {}),
    fields: [...requestFields(request).flatMap(([name, value]) => (value === undefined ? [] : [[name, value] as [string, string]])), ...openIdFields],
    subject: {
      action: AUTHORIZE_PATH,
      // The exact URL received on GET; rebuilt from the validated request otherwise.
      returnUrl: requestUrl.startsWith(AUTHORIZE_PATH) ? requestUrl : authorizeUrl(request),
      // A plain install sends nobody anywhere, even when the link named a redirect URI.
      redirectUri: request.plain ? undefined : redirect?.redirectUri,
    },
    ...(install ? { install } : {}),
    ...(wantsIncomingWebhook(request) ? { webhook: await webhookConsent(deps, userId) } : {}),
  };
}
