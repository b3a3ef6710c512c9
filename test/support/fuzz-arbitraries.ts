import fc from 'fast-check';
import { registeredRoutes, type RegisteredRoute } from './routes.js';
export { registeredRoutes, type RegisteredRoute };

/**
 * Request generators for the bad-input fuzzing of issue #7 §5 (test/reliability/fuzz.test.ts):
 * every route the app registers, with hostile path segments, query strings, headers and bodies,
 * mixed with real ids and credentials from a seeded pool so that authenticated and validated
 * code is reached too, not only the first 401 or 404.
 */

/** Real values the fuzzer mixes in: ids by route parameter name, and working credentials. */
export interface FuzzPool {
  /** Route parameter name (`channelId`, `id`, `token`…) → values that exist in the database. */
  params: Record<string, string[]>;
  /** Field names seen in the app's forms and API schemas. */
  fieldNames: string[];
  sessionCookie: { name: string; value: string; csrf: string };
  anonCookie: { name: string; value: string; csrf: string };
  bearer: string;
  botToken: string;
  client: { id: string; secret: string };
  /** The app's own origin (page POSTs check Origin). */
  origin: string;
}

/** One generated request, as app.inject() takes it. */
export interface FuzzRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  payload?: string | Buffer;
  /** Which route template it was generated from (for the report). */
  route: string;
}

const PROTO_KEYS = ['__proto__', 'constructor', 'prototype'];

/** Text that stresses decoders and renderers: unicode, controls, markup, SQL, format strings. */
const nastyText = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.constantFrom(
    '',
    ' ',
    '\u0000',
    '\ud800',
    '\uffff',
    '\u202e',
    '𝕏🏳️‍🌈',
    '<script>alert(1)</script>',
    "' OR 1=1 --",
    '%s%n%x',
    '${7*7}',
    '../../etc/passwd',
    'null',
    'true',
    '-0',
    'NaN',
    'Infinity',
    '1e309',
    '@me',
    '@everyone',
  ),
);

/** Strings far over every field's limit (and now and then near the body limit). */
const hugeText = fc.oneof(
  { weight: 4, arbitrary: fc.integer({ min: 2_001, max: 8_000 }).map((n) => 'x'.repeat(n)) },
  { weight: 1, arbitrary: fc.integer({ min: 8_000, max: 70_000 }).map((n) => 'x'.repeat(n)) },
  { weight: 2, arbitrary: fc.integer({ min: 1, max: 3_000 }).map((n) => '😀'.repeat(n)) },
);

/** Numbers that overflow, go negative, or are not integers. */
const nastyNumber = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.constantFrom(0, -1, 2 ** 53, 2 ** 63, -(2 ** 63), 1e308, Number.MAX_SAFE_INTEGER + 2, 0.5),
);

/** Snowflake-like path and body values: real-looking, overflowing, malformed. */
export const idLike = fc.oneof(
  fc.bigInt({ min: 1n, max: (1n << 63n) - 1n }).map(String),
  fc.constantFrom(
    '0',
    '-1',
    '1',
    '9223372036854775807',
    '9223372036854775808',
    '18446744073709551616',
    '99999999999999999999999999999999',
    '1e18',
    '0x10',
    '00000000000000000001',
    ' 1',
    '1.0',
    '@me',
  ),
);

/** Path segments: ids, encoded slashes and dots, bad percent-encoding, unicode, very long. */
const hostileSegment = fc.oneof(
  idLike,
  fc.constantFrom('%2F', '..%2F..%2F', '%2e%2e', '%00', '%', '%zz', '%E0%A4%A', '%C3%28', '%FF%FE', '%F0%9F%98', '%u0041', ';', '%3B', '%20', '+', '.', '..', '~'),
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 12 }).map(encode),
  fc.integer({ min: 150, max: 2_000 }).map((n) => '1'.repeat(n)),
  fc.string({ minLength: 1, maxLength: 30 }).map(encode),
);

/** Header values a client could really send: latin1 without CR, LF or NUL. */
const headerText = (maxLength: number) =>
  fc.string({ unit: fc.oneof(fc.integer({ min: 0x20, max: 0x7e }), fc.integer({ min: 0x80, max: 0xff }), fc.constant(0x09)).map((c) => String.fromCharCode(c)), maxLength });

/** A JSON value of any type, sometimes deeply nested. */
const anyJson: fc.Arbitrary<unknown> = fc.oneof(
  { depthSize: 'small', withCrossShrink: true },
  nastyText,
  nastyNumber,
  fc.boolean(),
  fc.constant(null),
  fc.array(nastyText, { maxLength: 5 }),
  fc.dictionary(nastyText, nastyText, { maxKeys: 4 }),
  fc.jsonValue({ maxDepth: 4 }),
);

/** `depth` nested arrays or objects, as JSON text (too deep for naive recursion). */
const deepJsonText = fc
  .tuple(fc.integer({ min: 50, max: 20_000 }), fc.boolean(), fc.constantFrom('content', 'embeds', 'name', 'a'))
  .map(([depth, arrays, key]) => (arrays ? `${'['.repeat(depth)}1${']'.repeat(depth)}` : `${`{"${key}":`.repeat(depth)}1${'}'.repeat(depth)}`));

function jsonLiteral(value: unknown): string {
  return JSON.stringify(value) ?? 'null';
}

/** Field name generator: names the app uses (most of the time), prototype keys, or noise. */
function fieldName(pool: FuzzPool): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...pool.fieldNames) },
    { weight: 1, arbitrary: fc.constantFrom(...PROTO_KEYS, '__proto__[x]', 'constructor[prototype][x]', 'a[b][c]', 'roles[]', 'embeds[0][title]') },
    { weight: 1, arbitrary: nastyText },
  );
}

/** A value for a real field: right-looking values, real ids, wrong types, huge strings. */
function fieldValue(pool: FuzzPool): fc.Arbitrary<unknown> {
  const realIds = Object.values(pool.params).flat();
  return fc.oneof(
    { weight: 3, arbitrary: nastyText },
    { weight: 2, arbitrary: anyJson },
    { weight: 1, arbitrary: idLike },
    { weight: 1, arbitrary: fc.constantFrom(...realIds) },
    { weight: 1, arbitrary: hugeText },
    { weight: 1, arbitrary: fc.constantFrom('authorization_code', 'refresh_token', 'client_credentials', 'identify guilds bot webhook.incoming', 'https://app.example.com/callback', 'code') },
  );
}

/** JSON bodies: objects of real field names with wrong values, duplicates, proto keys, deep or broken text. */
function jsonBody(pool: FuzzPool): fc.Arbitrary<string | Buffer> {
  const entries = fc.array(fc.tuple(fieldName(pool), fieldValue(pool)), { maxLength: 8 });
  return fc.oneof(
    { weight: 6, arbitrary: entries.map((list) => `{${list.map(([k, v]) => `${JSON.stringify(k)}:${jsonLiteral(v)}`).join(',')}}`) },
    // Duplicate keys: which one wins must not matter to safety.
    { weight: 1, arbitrary: fc.tuple(fieldName(pool), fieldValue(pool), fieldValue(pool)).map(([k, a, b]) => `{${JSON.stringify(k)}:${jsonLiteral(a)},${JSON.stringify(k)}:${jsonLiteral(b)}}`) },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...PROTO_KEYS), anyJson).map(([k, v]) => `{"${k}":{"polluted":${jsonLiteral(v)},"prototype":{"polluted":1}},"content":"x"}`) },
    { weight: 1, arbitrary: anyJson.map(jsonLiteral) },
    { weight: 1, arbitrary: deepJsonText },
    { weight: 1, arbitrary: fc.constantFrom('', '{', '{"content":', '[1,]', "{'a':1}", 'undefined', '{"a":1}{"b":2}', '\ufeff{}', '{"content":"\\ud800"}', '{"content":"\\u0000"}') },
    { weight: 1, arbitrary: invalidUtf8 },
  );
}

/** Bytes that are not UTF-8, inside otherwise plausible bodies. */
const invalidUtf8: fc.Arbitrary<Buffer> = fc
  .tuple(fc.constantFrom('{"content":"', 'content=', 'name=', '{"name":"', ''), fc.uint8Array({ minLength: 1, maxLength: 16 }), fc.constantFrom([0xc3, 0x28], [0xff, 0xfe], [0xe0, 0xa4], [0xf0, 0x9f, 0x98], [0xed, 0xa0, 0x80], [0x80]))
  .map(([prefix, noise, bad]) => Buffer.concat([Buffer.from(prefix), Buffer.from(bad), Buffer.from(noise), Buffer.from(prefix.startsWith('{') ? '"}' : '')]));

/** encodeURIComponent, with lone surrogates (which it refuses) sent as U+FFFD as a browser would. */
export function encode(text: string): string {
  return encodeURIComponent(Buffer.from(text, 'utf8').toString('utf8'));
}

function formEncode(pairs: readonly (readonly [string, string])[]): string {
  return pairs.map(([k, v]) => `${encode(k)}=${encode(v)}`).join('&');
}

function asFormText(value: unknown): string {
  return typeof value === 'string' ? value : jsonLiteral(value);
}

/** Form bodies: real names, repeated names, bracket and proto names, bad percent-encoding, raw bytes. */
function formBody(pool: FuzzPool, csrf: fc.Arbitrary<string | undefined>): fc.Arbitrary<string | Buffer> {
  const pairs = fc.array(fc.tuple(fieldName(pool), fieldValue(pool).map(asFormText)), { maxLength: 8 });
  return fc.oneof(
    { weight: 8, arbitrary: fc.tuple(pairs, csrf, fc.boolean()).map(([list, token, twice]) => formEncode([...list, ...(token === undefined ? [] : [['_csrf', token] as const]), ...(twice && list[0] ? [list[0]] : [])])) },
    { weight: 1, arbitrary: fc.constantFrom('%', 'a=%zz', 'a=%E0%A4%A', '=&=&&', '&&&', 'a', '__proto__=1&constructor=2', '__proto__[polluted]=1', 'a[]=1&a[]=2', 'a=1&a=2&a=3', '+=+') },
    { weight: 1, arbitrary: invalidUtf8 },
  );
}

/** Query strings: real names with hostile values, repeats, brackets, broken encoding. */
function queryString(pool: FuzzPool): fc.Arbitrary<string> {
  const pairs = fc.array(fc.tuple(fieldName(pool), fc.oneof(nastyText, idLike, fc.constantFrom(...Object.values(pool.params).flat()))), { maxLength: 5 });
  return fc.oneof(
    { weight: 4, arbitrary: fc.constant('') },
    { weight: 4, arbitrary: pairs.map((list) => (list.length ? `?${formEncode(list)}` : '')) },
    { weight: 1, arbitrary: fc.constantFrom('?', '?&', '?=', '?%', '?a=%zz', '?__proto__[x]=1', '?after=1&after=2', '?next=//evil.example', '?next=https://evil.example', '?code=x&code=y', '?a=%E0%A4%A') },
    { weight: 1, arbitrary: hugeText.map((text) => `?q=${text.slice(0, 20_000)}`) },
  );
}

function basic(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
}

/** Authorization headers: real credentials, and every way to get the scheme or the token wrong. */
function authorization(pool: FuzzPool): fc.Arbitrary<string | undefined> {
  const { bearer, botToken, client } = pool;
  return fc.oneof(
    { weight: 6, arbitrary: fc.constant(undefined) },
    { weight: 2, arbitrary: fc.constantFrom(`Bearer ${bearer}`, `Bot ${botToken}`, basic(client.id, client.secret)) },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        'Bearer',
        'Bearer ',
        'Bearer  ',
        `bearer ${bearer}`,
        `Bearer ${bearer} extra`,
        `Bearer ${bearer.slice(0, -1)}`,
        `Bot ${bearer}`,
        `Bearer ${botToken}`,
        'Bot',
        'Bot ',
        `Bot  ${botToken}`,
        `Basic`,
        'Basic !!!',
        'Basic ====',
        `Basic ${Buffer.from(client.id).toString('base64')}`,
        `Basic ${Buffer.from([0xff, 0xfe, 0x3a, 0xc3, 0x28]).toString('base64')}`,
        basic(`${client.id}%zz`, client.secret),
        basic(client.id, `${client.secret}%`),
        basic(client.id, ''),
        basic('', ''),
        'Digest username="x"',
        'Negotiate abc',
        'Bearer null',
        'Bearer undefined',
      ),
    },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom('Bearer ', 'Bot ', 'Basic ', ''), headerText(60)).map(([scheme, value]) => scheme + value) },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom('Bearer ', 'Bot ', 'Basic '), fc.integer({ min: 1_000, max: 12_000 })).map(([scheme, n]) => scheme + 'A'.repeat(n)) },
  );
}

/** Content-Type headers: right, wrong, missing, and charset tricks. */
const contentType = fc.constantFrom(
  'application/json',
  'application/json; charset=utf-8',
  'application/json; charset=utf-16',
  'application/json; charset=latin1',
  'application/json; charset="UTF-8"',
  'application/json;charset=utf-8;charset=ascii',
  'APPLICATION/JSON',
  'application/json-patch+json',
  'application/x-www-form-urlencoded',
  'application/x-www-form-urlencoded; charset=iso-8859-1',
  'multipart/form-data',
  'multipart/form-data; boundary=x',
  'text/plain',
  'text/html',
  'application/xml',
  'application/octet-stream',
  '*/*',
  ';',
  'json',
  '',
);

/** Cookies: the real session, an anonymous CSRF cookie, stale or garbage values, or none. */
function cookie(pool: FuzzPool): fc.Arbitrary<string | undefined> {
  const { sessionCookie: s, anonCookie: a } = pool;
  return fc.oneof(
    { weight: 3, arbitrary: fc.constant(undefined) },
    { weight: 4, arbitrary: fc.constant(`${s.name}=${s.value}`) },
    { weight: 1, arbitrary: fc.constant(`${a.name}=${a.value}`) },
    { weight: 1, arbitrary: fc.constantFrom(`${s.name}=${s.value}x`, `${s.name}=`, `${s.name}=%`, `${s.name}=${s.value}; ${s.name}=garbage`, `${a.name}=short`, '=;;=', `${s.name}="${s.value}"`) },
    { weight: 1, arbitrary: headerText(200).map((text) => `${s.name}=${text.replace(/;/g, '')}`) },
  );
}

/** Any other header: oversized values, forged proxy headers, request ids, SSE ids, odd accepts. */
function extraHeaders(): fc.Arbitrary<Record<string, string>> {
  return fc.dictionary(
    fc.constantFrom('x-request-id', 'x-forwarded-for', 'x-forwarded-proto', 'x-forwarded-host', 'host', 'accept', 'accept-language', 'user-agent', 'last-event-id', 'referer', 'if-none-match', 'range', 'accept-encoding', 'x-http-method-override'),
    fc.oneof(headerText(80), fc.integer({ min: 1_000, max: 16_000 }).map((n) => 'h'.repeat(n)), fc.constantFrom('', '0', '-1', '99999999999999999999', 'text/event-stream', 'DELETE', 'bytes=0-1,5-', 'evil.example', 'https')),
    { maxKeys: 3 },
  );
}

/** The substitute for `:name` in a route: a real value for it, another real id, or a hostile one. */
function segment(pool: FuzzPool, name: string): fc.Arbitrary<string> {
  const real = pool.params[name] ?? [];
  const others = Object.values(pool.params).flat();
  return fc.oneof(
    ...(real.length ? [{ weight: 6, arbitrary: fc.constantFrom(...real) }] : []),
    { weight: 1, arbitrary: fc.constantFrom(...others) },
    { weight: 2, arbitrary: hostileSegment },
  );
}

const UNUSUAL_METHODS = ['PUT', 'PATCH', 'DELETE', 'OPTIONS', 'POST', 'GET'] as const;

/**
 * A request for `route`: its own method most of the time, real or hostile path parameters, a
 * query string, headers, and a body shaped like the media type it claims (or not).
 */
export function requestFor(pool: FuzzPool, route: RegisteredRoute): fc.Arbitrary<FuzzRequest> {
  const names = [...route.url.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1] as string);
  const params = fc.tuple(...names.map((name) => segment(pool, name)));
  const csrf = fc.oneof(
    { weight: 5, arbitrary: fc.constantFrom(pool.sessionCookie.csrf, pool.anonCookie.csrf) },
    { weight: 1, arbitrary: fc.constantFrom(undefined, '', 'x', `${pool.sessionCookie.csrf}x`) },
  );
  const body = fc.oneof(
    { weight: 12, arbitrary: fc.tuple(fc.constant('application/json' as string | undefined), jsonBody(pool)) },
    { weight: 12, arbitrary: fc.tuple(fc.constant('application/x-www-form-urlencoded' as string | undefined), formBody(pool, csrf)) },
    { weight: 8, arbitrary: fc.tuple(contentType.map((c) => c as string | undefined), fc.oneof(jsonBody(pool), formBody(pool, csrf))) },
    { weight: 4, arbitrary: fc.tuple(fc.constant(undefined as string | undefined), fc.constant(undefined as string | Buffer | undefined)) },
    // Over GATEHOUSE_BODY_LIMIT_BYTES (1 MiB by default): 413.
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom('application/json', 'application/x-www-form-urlencoded', 'text/plain'), fc.integer({ min: 1_048_577, max: 1_300_000 }).map((n) => 'a'.repeat(n) as string | Buffer)) },
  );
  return fc
    .record({
      method: fc.oneof({ weight: 9, arbitrary: fc.constant(route.method) }, { weight: 1, arbitrary: fc.constantFrom(...UNUSUAL_METHODS) }),
      params,
      suffix: fc.oneof({ weight: 12, arbitrary: fc.constant('') }, { weight: 1, arbitrary: fc.constantFrom('/', '//', '/..', '/%2e%2e', '/x', '.json', '%00') }),
      query: queryString(pool),
      authorization: authorization(pool),
      cookie: cookie(pool),
      origin: fc.oneof({ weight: 4, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.constantFrom(pool.origin, 'null', 'https://evil.example', '') }),
      extra: extraHeaders(),
      body,
    })
    .map(({ method, params: values, suffix, query, authorization: auth, cookie: cookieHeader, origin, extra, body: [type, payload] }) => {
      let i = 0;
      const path = route.url.replace(/:([A-Za-z0-9_]+)/g, () => values[i++] as string);
      const headers: Record<string, string> = { ...extra };
      if (auth !== undefined) headers['authorization'] = auth;
      if (cookieHeader !== undefined) headers['cookie'] = cookieHeader;
      if (origin !== undefined) headers['origin'] = origin;
      const sendsBody = method !== 'GET' && method !== 'HEAD' && method !== 'OPTIONS' && payload !== undefined;
      if (sendsBody && type !== undefined) headers['content-type'] = type;
      return { method, url: `${path}${suffix}${query}`, headers, ...(sendsBody ? { payload } : {}), route: `${route.method} ${route.url}` };
    });
}

/** One request for any of `routes`, each route equally likely. */
export function anyRequest(pool: FuzzPool, routes: readonly RegisteredRoute[]): fc.Arbitrary<FuzzRequest> {
  return fc.oneof(...routes.map((route) => requestFor(pool, route)));
}
