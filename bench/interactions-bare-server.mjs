// The floor of a command invocation (bench/interactions.mjs, issue #40), in the same run as
// Gatehouse: node:http doing for the composer's `POST /channels/{id}/messages` the least that could
// be called the same work, with no Gatehouse code and nothing stored. It reads the form, takes
// `/ping n:<int>` from its `content`, builds an APPLICATION_COMMAND interaction with Discord's
// fields (the size of Gatehouse's), signs it as Discord does (Ed25519 over
// X-Signature-Timestamp + body), POSTs it to the same app (APP_URL) over a keep-alive agent, reads
// and parses the app's type 4 answer, and redirects 303 to `/channels/{id}#post` as the composer
// does. No session, CSRF, permissions, command lookup, rate limit, interaction row or posted
// answer: what it takes is what Node.js and this machine take for the protocol alone.
import { generateKeyPairSync, randomBytes, randomUUID, sign } from 'node:crypto';
import http from 'node:http';

const appUrl = new URL(process.env.APP_URL);
const agent = new http.Agent({ keepAlive: true, scheduling: 'lifo' });
const { privateKey } = generateKeyPairSync('ed25519');
const ROUTE = /^\/channels\/(\d+)\/messages$/;
const PING = /^\/ping n:(-?\d+)$/;
let sequence = 0n;
const snowflake = () => ((BigInt(Date.now() - 1420070400000) << 22n) | (sequence++ & 0xfffn)).toString();

/** The interaction as Gatehouse sends one from a server channel (src/modules/interactions/interactions.service.ts). */
function interaction(channelId, n) {
  return {
    id: snowflake(),
    application_id: '1300000000000000001',
    type: 2,
    data: { id: '1300000000000000002', name: 'ping', type: 1, options: [{ type: 4, name: 'n', value: n }] },
    guild_id: '1300000000000000003',
    guild: { id: '1300000000000000003', locale: 'en-US', features: [] },
    guild_locale: 'en-US',
    channel_id: channelId,
    member: {
      user: { id: '1300000000000000004', username: 'member.0', global_name: null, avatar: null, discriminator: '0', public_flags: 0, bot: false },
      roles: [],
      joined_at: new Date().toISOString(),
      nick: null,
      deaf: false,
      mute: false,
      flags: 0,
      permissions: '3072',
    },
    app_permissions: '3072',
    context: 0,
    authorizing_integration_owners: { 0: '1300000000000000003' },
    token: randomBytes(32).toString('base64url'),
    version: 1,
    locale: 'en-US',
    entitlements: [],
    attachment_size_limit: 26214400,
  };
}

/** POSTs the signed interaction to the app; resolves to its parsed answer. */
function callApp(body) {
  const timestamp = String(Math.floor(Date.now() / 1000));
  const signature = sign(null, Buffer.concat([Buffer.from(timestamp), body]), privateKey).toString('hex');
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        agent,
        host: appUrl.hostname,
        port: appUrl.port,
        method: 'POST',
        path: appUrl.pathname,
        headers: { 'content-type': 'application/json', 'content-length': body.length, 'x-signature-ed25519': signature, 'x-signature-timestamp': timestamp, 'user-agent': 'bench-bare (interactions)', 'x-request-id': randomUUID() },
        timeout: 3000,
      },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          try {
            resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
          } catch (error) {
            reject(error);
          }
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error('the app did not answer within 3 s')));
    req.end(body);
  });
}

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    if (req.url === '/healthz') return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
    const route = req.method === 'POST' ? ROUTE.exec(req.url ?? '') : null;
    const ping = route ? PING.exec(new URLSearchParams(Buffer.concat(chunks).toString('utf8')).get('content') ?? '') : null;
    if (!route || !ping) return void res.writeHead(400).end();
    const channelId = route[1];
    callApp(Buffer.from(JSON.stringify(interaction(channelId, Number(ping[1])))))
      .then((answer) => {
        if (answer?.type !== 4 || typeof answer.data?.content !== 'string') throw new Error('the app did not answer type 4 with content');
        res.writeHead(303, { location: `/channels/${channelId}#post`, 'content-length': 0 }).end();
      })
      .catch(() => res.writeHead(502).end());
  });
});
server.keepAliveTimeout = 65_000;
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1');
process.on('SIGTERM', () => server.close(() => process.exit(0)));
