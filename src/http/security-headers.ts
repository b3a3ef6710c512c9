/**
 * Security headers on every answer (DESIGN §4), computed once at start-up from helmet and copied
 * onto each reply by one synchronous hook, with X-Request-Id (docs/performance.md §Security headers).
 * Invariant: every answer carries exactly the set helmet would send for its kind: all of it on
 * documents, the API subset on JSON under /api (OWASP REST cheat sheet).
 * Tested by test/http/operations.test.ts and test/reliability/security.test.ts.
 */
import Fastify from 'fastify';
import helmet, { type FastifyHelmetOptions } from '@fastify/helmet';
import type { App } from './app-type.js';
import { isApiRequest } from './error-handler.js';
import { API_DOCS_PATH } from './openapi.routes.js';

/** Headers every answer has anyway, never taken from the probe. */
const TRANSPORT_HEADERS = new Set(['content-type', 'content-length', 'date', 'connection', 'keep-alive', 'transfer-encoding']);

/**
 * The Content-Security-Policy of every answer that is not an HTML document: it loads nothing and
 * may be framed by nothing (OWASP REST Security Cheat Sheet, "Security Headers"; GitHub's API
 * sends the same `default-src 'none'`).
 */
export const NON_DOCUMENT_CSP = "default-src 'none'; frame-ancestors 'none'";

/** Helmet's headers that still mean something on a JSON answer; the rest only govern documents. */
const NON_DOCUMENT_HEADERS = ['x-content-type-options', 'x-frame-options', 'referrer-policy', 'strict-transport-security'];

/** The API reference page, with or without a query string. */
function isApiReference(url: string): boolean {
  return url.startsWith(API_DOCS_PATH) && (url.length === API_DOCS_PATH.length || url[API_DOCS_PATH.length] === '?');
}

/**
 * Security headers on every answer (DESIGN §4), computed once: helmet's full set on documents, and
 * on API answers only the ones that apply to a JSON body.
 *
 * @fastify/helmet builds helmet's middleware again for every request (parsing the CSP directives
 * each time, in two async hooks): 1–2.5 % of the CPU on the API hot paths.
 * The headers depend only on the options, so one request to a throwaway instance with the same
 * options yields exactly the set helmet would send, and one synchronous hook copies it onto each
 * reply, with the request's X-Request-Id. A route that needs another policy (the consent page)
 * still overrides a header itself.
 *
 * Documents (pages, their redirects and event streams, HTML error pages, the API reference) get
 * the whole set: a strict CSP for their scripts and styles (OAUTH-CHECKLIST A15), COOP, Origin-
 * Agent-Cluster, X-DNS-Prefetch-Control and the rest. A JSON answer under /api is never rendered
 * as a document, so it gets what OWASP's REST cheat sheet asks of an API: a CSP that loads and
 * frames nothing, nosniff, X-Frame-Options DENY, Referrer-Policy, and HSTS over https. Node
 * validates and copies each header of each answer: in a bare node:http server the whole set costs
 * ~9 µs per answer more than this one; in Gatehouse, 5–9 % of scenario 1's CPU per answer.
 */
export async function installSecurityHeaders(app: App, options: FastifyHelmetOptions): Promise<void> {
  const probe = Fastify({ logger: false });
  await probe.register(helmet, options);
  probe.get('/', async () => '');
  const answer = await probe.inject({ method: 'GET', url: '/' });
  await probe.close();
  const documentHeaders: Record<string, string> = {};
  for (const [name, value] of Object.entries(answer.headers)) {
    if (!TRANSPORT_HEADERS.has(name) && typeof value === 'string') documentHeaders[name] = value;
  }
  const apiHeaders: Record<string, string> = { 'content-security-policy': NON_DOCUMENT_CSP };
  for (const name of NON_DOCUMENT_HEADERS) {
    const value = documentHeaders[name];
    if (value !== undefined) apiHeaders[name] = value;
  }
  const forDocuments = Object.freeze(documentHeaders);
  const forApi = Object.freeze(apiHeaders);
  // The same synchronous hook echoes the request id (DESIGN §8): one hook instead of an async
  // onSend hook, which cost a promise and a microtask turn per request (docs/performance.md §Request hooks).
  // The set follows the predicate the error handler uses to answer JSON rather than an HTML page;
  // the API reference is the one HTML document under /api. Compared on the URL, not on
  // request.routeOptions, which Fastify builds as a new object at every access (a hot path).
  app.addHook('onRequest', (request, reply, done) => {
    reply.headers(isApiRequest(request) && !isApiReference(request.url) ? forApi : forDocuments);
    // Lower-case names on hot paths: Fastify lower-cases every name it is given, and an
    // already lower-case literal comes back as the same interned string instead of a new one to
    // allocate and hash for every answer (docs/performance.md §Request hooks). The wire is the same.
    reply.header('x-request-id', request.id);
    done();
  });
}
