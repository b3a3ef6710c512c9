// node-oidc-provider (npm oidc-provider, kept in memory: MapAdapter below) configured for the same workloads
// as Gatehouse's token and userinfo scenarios: one confidential client (client_secret_basic),
// PKCE, refresh tokens that rotate. Run by bench/lib/peers.mjs with the Node of bench/peers
// (oidc-provider 9 needs Node ≥ 22), on PORT.
//
// Codes are minted through the library's own models (Grant, AuthorizationCode), as its
// interaction flow would save them after consent: the bench measures the token endpoint and
// userinfo, not the sign-in pages. POST /bench/mint { count, scope } answers
// [{ code, verifier }]; the driver exchanges some over HTTP for refresh and access tokens.
import { createHash, generateKeyPairSync, randomBytes } from 'node:crypto';
import http from 'node:http';
import Provider from 'oidc-provider';

const port = Number(process.env.PORT);
const issuer = `http://127.0.0.1:${port}`;
const CLIENT = { client_id: 'bench', client_secret: 'bench-secret-0123456789abcdef0123456789', redirect_uris: ['https://bench.example/cb'] };
const ACCOUNT = 'bench-person';

// ID tokens signed with RS256 (2048-bit), as Gatehouse signs them for an app at the defaults
// (docs/oidc.md: RS256 is OpenID's default id_token_signed_response_alg), and as oidc-provider does.
const signingKey = { ...generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' }), kid: 'bench', alg: 'RS256', use: 'sig' };

/**
 * The library's own in-memory adapter without its bound: the bundled one is an LRU of 1,000
 * entries, and a pool of tens of thousands of codes (each with its grant) would evict the codes
 * before they are used. A Map per model, as the bundled adapter's shape (oidc-provider's
 * lib/adapters/memory_adapter.js), expiry checked on read.
 */
const store = new Map();
const grantIndex = new Map();
class MapAdapter {
  constructor(model) {
    this.model = model;
  }
  key(id) {
    return `${this.model}:${id}`;
  }
  async upsert(id, payload, expiresIn) {
    const key = this.key(id);
    store.set(key, { payload, expiresAt: expiresIn ? Date.now() + expiresIn * 1000 : undefined });
    if (payload.grantId) {
      const keys = grantIndex.get(payload.grantId) ?? [];
      keys.push(key);
      grantIndex.set(payload.grantId, keys);
    }
  }
  async find(id) {
    const entry = store.get(this.key(id));
    if (!entry) return undefined;
    if (entry.expiresAt !== undefined && entry.expiresAt < Date.now()) {
      store.delete(this.key(id));
      return undefined;
    }
    return entry.payload;
  }
  async findByUid(uid) {
    const id = store.get(`sessionUid:${uid}`)?.payload;
    return id ? this.find(id) : undefined;
  }
  async findByUserCode(userCode) {
    const id = store.get(`userCode:${userCode}`)?.payload;
    return id ? this.find(id) : undefined;
  }
  async consume(id) {
    const entry = store.get(this.key(id));
    if (entry) entry.payload.consumed = Math.floor(Date.now() / 1000);
  }
  async destroy(id) {
    store.delete(this.key(id));
  }
  async revokeByGrantId(grantId) {
    for (const key of grantIndex.get(grantId) ?? []) store.delete(key);
    grantIndex.delete(grantId);
  }
}

const provider = new Provider(issuer, {
  adapter: MapAdapter,
  clients: [{ ...CLIENT, grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'client_secret_basic', id_token_signed_response_alg: 'RS256' }],
  jwks: { keys: [signingKey] },
  findAccount: (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub, preferred_username: 'benchowner' }) }),
  claims: { openid: ['sub'], profile: ['preferred_username'] },
  scopes: ['openid', 'offline_access', 'profile'],
  features: { devInteractions: { enabled: false } },
  pkce: { required: () => true },
  // Rotate on every use, as Gatehouse does (docs/oauth.md: each refresh returns a new refresh token).
  rotateRefreshToken: true,
  ttl: { AccessToken: 3600, AuthorizationCode: 600, RefreshToken: 30 * 24 * 3600, Grant: 30 * 24 * 3600, IdToken: 3600 },
});
provider.proxy = false;

const b64url = (buf) => buf.toString('base64url');

async function mint(count, scope) {
  const client = await provider.Client.find(CLIENT.client_id);
  const out = [];
  for (let i = 0; i < count; i += 1) {
    const grant = new provider.Grant({ accountId: ACCOUNT, clientId: CLIENT.client_id });
    grant.addOIDCScope(scope);
    const grantId = await grant.save();
    const verifier = b64url(randomBytes(32));
    const code = new provider.AuthorizationCode({
      accountId: ACCOUNT,
      client,
      grantId,
      scope,
      redirectUri: CLIENT.redirect_uris[0],
      codeChallenge: b64url(createHash('sha256').update(verifier).digest()),
      codeChallengeMethod: 'S256',
      authTime: Math.floor(Date.now() / 1000),
      ...(scope.split(' ').includes('openid') ? { nonce: `n-${i}` } : {}),
    });
    out.push({ code: await code.save(), verifier });
  }
  return out;
}

const callback = provider.callback();
const server = http.createServer((req, res) => {
  if (req.url === '/healthz') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"status":"ok"}');
    return;
  }
  if (req.method === 'POST' && req.url === '/bench/mint') {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const { count, scope } = JSON.parse(body);
      mint(count, scope).then(
        (codes) => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify(codes));
        },
        (error) => {
          res.writeHead(500, { 'content-type': 'text/plain' });
          res.end(String(error?.stack ?? error));
        },
      );
    });
    return;
  }
  callback(req, res);
});
server.keepAliveTimeout = 65_000;
server.listen(port, '127.0.0.1');
process.on('SIGTERM', () => server.close(() => process.exit(0)));
