// Seeding through the CLI (`gatehouse batch`: one process for many creates) and the public HTTP
// API, as an operator and an app developer would. Nothing is written to the database directly
// (except the 1M-message fill of --messages-1m, see fill-messages.mjs).
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { CookieJar, formFields, pool, request } from './http.mjs';
import { DIST, ROOT } from './processes.mjs';

export const OWNER = { username: 'benchowner', password: 'bench-password-0123' };
// A web app's https callback: a public client on loopback sees the consent screen every time
// (RFC 8252 §8.6, docs/oauth.md), which would add a form post to every minted code.
export const REDIRECT_URI = 'https://bench.example/cb';
/** View channel | Manage webhooks (Discord bit positions, docs/permissions.md). */
const BOT_PERMISSIONS = (1n << 10n) | (1n << 29n);

/** Runs `gatehouse batch` with one command per line; resolves to one parsed JSON object per line. */
export function cliBatch(env, lines) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(DIST, 'src/cli/index.js'), 'batch', '--json'], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (err += c));
    child.on('exit', (code) => {
      const records = out.split('\n').filter(Boolean).map((l) => JSON.parse(l));
      if (code !== 0) return reject(new Error(`gatehouse batch failed (${code}): ${err}\n${records.filter((r) => r.error).slice(0, 3).map((r) => JSON.stringify(r)).join('\n')}`));
      resolve(records.slice(0, lines.length));
    });
    child.stdin.end(lines.join('\n') + '\n');
  });
}

/** The operator's part: a person, a server, a bot app and a public OAuth app, in one batch. */
export async function seedDirectory(env) {
  const [person, server, botApp, oauthApp] = await cliBatch(env, [
    `people create --username ${OWNER.username} --password "${OWNER.password}"`,
    `servers create --owner ${OWNER.username} --name "Bench server"`,
    `apps create --owner ${OWNER.username} --name "Bench Bot" --redirect-uri ${REDIRECT_URI} --bot`,
    `apps create --owner ${OWNER.username} --name "Bench App" --public --redirect-uri ${REDIRECT_URI}`,
  ]);
  if (!botApp.bot_token) throw new Error('apps create --bot printed no bot_token: is the bot support (issue #4/#5) built?');
  return { person, server, botApp, oauthApp };
}

/** `count` channels in one batch; resolves to their ids. */
export async function seedChannels(env, serverId, count, prefix = 'bench') {
  const lines = Array.from({ length: count }, (_, i) => `channels create --server ${serverId} --name ${prefix}-${i + 1}`);
  const records = await cliBatch(env, lines);
  return records.map((r) => r.id);
}

/** Signs in once over HTTP like a browser: GET /login for the CSRF token and cookie, POST /login. */
export async function signIn(base) {
  const jar = new CookieJar();
  const page = await request(base, { path: '/login' });
  jar.store(page.headers['set-cookie']);
  const form = formFields(page.text, '/login');
  if (!form) throw new Error('no sign-in form on /login');
  const fields = Object.fromEntries(form.fields);
  const res = await request(base, {
    method: 'POST',
    path: '/login',
    headers: { cookie: jar.header() },
    form: { ...fields, username: OWNER.username, password: OWNER.password, next: '/' },
  });
  if (res.status !== 303) throw new Error(`sign-in answered ${res.status}: ${res.text.slice(0, 300)}`);
  jar.store(res.headers['set-cookie']);
  return jar;
}

/** Submits the consent form of an authorize page (OAuth consent or bot install) with Authorize. */
async function consent(base, jar, page) {
  const form = formFields(page.text, '/app/oauth2/authorize', { name: 'decision', value: 'authorize' });
  if (!form) throw new Error(`no consent form on the authorize page (${page.status}): ${page.text.slice(0, 300)}`);
  return request(base, { method: 'POST', path: '/app/oauth2/authorize', headers: { cookie: jar.header() }, form: form.fields });
}

/** Adds the bot to the server through the install page, with View channel and Manage webhooks (or `permissions`). */
export async function installBot(base, jar, botClientId, serverId, permissions = BOT_PERMISSIONS) {
  const query = new URLSearchParams({ client_id: botClientId, scope: 'bot', permissions: permissions.toString(), server_id: serverId, disable_server_select: 'true' });
  const page = await request(base, { path: `/app/oauth2/authorize?${query}`, headers: { cookie: jar.header() } });
  if (page.status !== 200) throw new Error(`bot install page answered ${page.status}: ${page.headers.location ?? page.text.replace(/<[^>]*>/g, " ").replace(/\s+/g, " ").slice(0, 1500)}`);
  const res = await consent(base, jar, page);
  if (res.status >= 400) throw new Error(`bot install answered ${res.status}: ${res.text.slice(0, 300)}`);
}

/** Creates `perChannel` webhooks in each channel with the bot token; resolves to their URL paths. */
export async function seedWebhooks(base, botToken, channelIds, perChannel, onProgress) {
  const jobs = channelIds.flatMap((channelId) => Array.from({ length: perChannel }, (_, i) => ({ channelId, name: `hook-${i + 1}` })));
  let done = 0;
  return pool(jobs, 32, async ({ channelId, name }) => {
    let res = await request(base, { method: 'POST', path: `/api/v1/channels/${channelId}/webhooks`, headers: { authorization: `Bot ${botToken}` }, body: { name } });
    // A bot's requests are rate limited (50 per second, docs/bots.md "Rate limits"): wait a 429 out, as Discord clients do.
    while (res.status === 429) {
      await new Promise((resolve) => setTimeout(resolve, Math.ceil(res.json().retry_after * 1000)));
      res = await request(base, { method: 'POST', path: `/api/v1/channels/${channelId}/webhooks`, headers: { authorization: `Bot ${botToken}` }, body: { name } });
    }
    if (res.status !== 201 && res.status !== 200) throw new Error(`webhook create answered ${res.status}: ${res.text.slice(0, 300)}`);
    const w = res.json();
    done += 1;
    if (onProgress && done % 1000 === 0) onProgress(done, jobs.length);
    return { id: w.id, channelId, path: `/api/v1/webhooks/${w.id}/${w.token}` };
  });
}

const b64url = (buf) => buf.toString('base64url');

/** RFC 7636: a fresh verifier and its S256 challenge. */
export function pkcePair() {
  const verifier = b64url(randomBytes(32));
  return { verifier, challenge: b64url(createHash('sha256').update(verifier).digest()) };
}

function authorizeQuery(clientId, challenge, state, scope = 'identify') {
  const query = new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: REDIRECT_URI, scope, state, code_challenge: challenge, code_challenge_method: 'S256' });
  // OpenID Connect requests carry a nonce, as every OIDC library sends one (issue #22).
  if (scope.split(' ').includes('openid')) query.set('nonce', `n-${state}`);
  return query;
}

function codeFrom(location) {
  const url = new URL(location);
  const code = url.searchParams.get('code');
  if (!code) throw new Error(`authorize redirected without a code: ${location}`);
  return code;
}

/**
 * The person consents once through the form; from then on the remembered consent makes every
 * GET /app/oauth2/authorize answer 302 with a code at once.
 */
export async function consentOnce(base, jar, clientId, scope = 'identify') {
  const { challenge } = pkcePair();
  const page = await request(base, { path: `/app/oauth2/authorize?${authorizeQuery(clientId, challenge, 'first', scope)}`, headers: { cookie: jar.header() } });
  if (page.status === 302) return;
  const res = await consent(base, jar, page);
  if (res.status !== 303) throw new Error(`consent answered ${res.status}: ${res.text.slice(0, 300)}`);
}

/** Mints `count` authorization codes, each with its own PKCE pair: [{ code, verifier }]. */
export async function mintCodes(base, jar, clientId, count, scope = 'identify') {
  const cookie = jar.header();
  return pool(Array.from({ length: count }), 32, async (_x, i) => {
    const { verifier, challenge } = pkcePair();
    const res = await request(base, { path: `/app/oauth2/authorize?${authorizeQuery(clientId, challenge, `s${i}`, scope)}`, headers: { cookie } });
    if (res.status !== 302) throw new Error(`authorize answered ${res.status} instead of a redirect with a code: ${res.text.slice(0, 200)}`);
    return { code: codeFrom(res.headers.location), verifier };
  });
}

/** The token request body of an authorization_code exchange (public client, PKCE). */
export function codeExchangeForm(clientId, { code, verifier }) {
  return new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, client_id: clientId, code_verifier: verifier }).toString();
}

export function refreshForm(clientId, refreshToken) {
  return new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: clientId }).toString();
}

/** Exchanges codes for token pairs: [{ access_token, refresh_token }]. */
export async function exchangeCodes(base, clientId, codes) {
  return pool(codes, 32, async (c) => {
    const res = await request(base, { method: 'POST', path: '/api/oauth2/token', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: codeExchangeForm(clientId, c) });
    if (res.status !== 200) throw new Error(`code exchange answered ${res.status}: ${res.text.slice(0, 300)}`);
    const t = res.json();
    return { access: t.access_token, refresh: t.refresh_token };
  });
}

/** The resource server the introspection and client-credentials scenarios use (docs/oauth.md). */
export const API_IDENTIFIER = 'https://api.bench.example/';

/**
 * A confidential app serving one resource server, through the CLI as an operator would set it up
 * (`apps create` without --public, then `apps resource add`): { clientId, secret, basic }.
 */
export async function seedResourceServer(env) {
  const [app] = await cliBatch(env, [`apps create --owner ${OWNER.username} --name "Bench API" --redirect-uri ${REDIRECT_URI}`]);
  if (!app.client_secret) throw new Error('apps create printed no client_secret for a confidential app');
  await cliBatch(env, [`apps resource add --app ${app.client_id} --identifier ${API_IDENTIFIER} --scope read:things --scope-description "Read things"`]);
  return { clientId: app.client_id, secret: app.client_secret, basic: `Basic ${Buffer.from(`${encodeURIComponent(app.client_id)}:${encodeURIComponent(app.client_secret)}`).toString('base64')}` };
}

/**
 * `count` access tokens of the signed-in person for the resource server, each through the consent
 * screen (RFC 8707 consent is not remembered, docs/oauth.md) and a code exchange with the app's
 * secret (client_secret_basic).
 */
export async function mintResourceTokens(base, jar, api, count) {
  const cookie = jar.header();
  return pool(Array.from({ length: count }), 16, async (_x, i) => {
    const { verifier, challenge } = pkcePair();
    const query = authorizeQuery(api.clientId, challenge, `r${i}`, 'read:things');
    query.set('resource', API_IDENTIFIER);
    let res = await request(base, { path: `/app/oauth2/authorize?${query}`, headers: { cookie } });
    if (res.status === 200) res = await consent(base, jar, res);
    if (res.status !== 302 && res.status !== 303) throw new Error(`authorize with resource answered ${res.status}: ${res.text.slice(0, 200)}`);
    const form = new URLSearchParams({ grant_type: 'authorization_code', code: codeFrom(res.headers.location), redirect_uri: REDIRECT_URI, code_verifier: verifier, resource: API_IDENTIFIER }).toString();
    const t = await request(base, { method: 'POST', path: '/api/oauth2/token', headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: api.basic }, body: form });
    if (t.status !== 200) throw new Error(`code exchange (resource) answered ${t.status}: ${t.text.slice(0, 300)}`);
    return t.json().access_token;
  });
}
