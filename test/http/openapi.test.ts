import Fastify from 'fastify';
import swagger from '@fastify/swagger';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { documentedRoutesOnly } from '../../src/http/openapi.routes.js';
import { describeType, type OpenApiDocument, type OpenApiOperation } from '../../src/http/openapi-document.js';
import { operationAnchor, renderApiReference } from '../../src/http/openapi.page.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { registeredRoutes } from '../support/routes.js';

/** Fastify's `:id` is OpenAPI's `{id}`. */
function openApiPath(url: string): string {
  return url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

/** The documentation routes themselves are not API operations. Any other /api route must be documented. */
const UNDOCUMENTED = new Set(['/api/openapi.json', '/api/docs']);

/**
 * DESIGN §1's alias routes answer like a documented twin and are left out so that each operation
 * is documented once: /api/v1/oauth2/token[/revoke] ↔ /api/oauth2/token[/revoke], and
 * /api/v1/users/@me/guilds ↔ /api/v1/users/@me/servers, /api/v1/oauth2/applications/@me ↔
 * /api/v1/applications/@me.
 */
function documentedTwin(url: string): string {
  if (url === '/api/v1/oauth2/applications/@me') return '/api/v1/applications/@me';
  return url.replace(/^\/api\/v1\/oauth2\//, '/api/oauth2/').replace(/\/guilds(?=\/|$)/, '/servers');
}

describe('the route walker used by the completeness check', () => {
  it('finds nested and parameterised routes with each of their methods', async () => {
    const app = Fastify();
    for (const [method, url] of [
      ['GET', '/api/v1/users/@me'],
      ['GET', '/api/v1/users/@me/guilds'],
      ['POST', '/api/v1/webhooks/:id/:token'],
      ['PATCH', '/api/v1/webhooks/:id/:token/messages/:messageId'],
      ['POST', '/login'],
    ] as const) {
      app.route({ method, url, handler: async () => ({}) });
    }
    await app.ready();
    const routes = registeredRoutes(app);
    expect(routes).toContainEqual({ method: 'GET', url: '/api/v1/users/@me/guilds' });
    expect(routes).toContainEqual({ method: 'POST', url: '/api/v1/webhooks/:id/:token' });
    expect(routes).toContainEqual({ method: 'PATCH', url: '/api/v1/webhooks/:id/:token/messages/:messageId' });
    expect(routes).toContainEqual({ method: 'POST', url: '/login' });
    expect(routes).toHaveLength(7); // the two GETs also answer HEAD
    await app.close();
  });
});

describe('OpenAPI 3.1 document at /api/openapi.json', () => {
  let t: TestApp;
  let doc: OpenApiDocument;
  beforeAll(async () => {
    t = await createTestApp();
    const res = await t.app.inject({ method: 'GET', url: '/api/openapi.json' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('application/json');
    doc = res.json();
  });
  afterAll(async () => t.close());

  it('is an OpenAPI 3.1 document naming the service and its base URL', () => {
    expect((doc as unknown as { openapi: string }).openapi).toBe('3.1.0');
    expect(doc.info.title).toBe('Gatehouse API');
    expect(doc.servers?.[0]?.url).toBe('http://localhost:8080');
    expect(Object.keys(doc.components?.securitySchemes ?? {})).toEqual(expect.arrayContaining(['bearer', 'bot']));
  });

  it('documents every registered /api and /.well-known route with each of its methods (aliases by their twin; 405 answers need none)', async () => {
    const routes = registeredRoutes(t.app);
    expect(routes).toContainEqual({ method: 'GET', url: '/api/docs' }); // the walker sees the real app
    const documented = (url: string, method: string) => doc.paths[openApiPath(url)]?.[method.toLowerCase()] !== undefined;
    const missing: string[] = [];
    for (const route of routes) {
      if (!route.url.startsWith('/api/') && !route.url.startsWith('/.well-known/')) continue;
      if (UNDOCUMENTED.has(route.url) || route.method === 'HEAD') continue;
      if (documented(route.url, route.method) || documented(documentedTwin(route.url), route.method)) continue;
      // A handler that only answers 405 Method Not Allowed is not an operation.
      const probe = await t.app.inject({ method: route.method as 'GET', url: route.url.replace(/:[A-Za-z0-9_]+/g, '0') });
      if (probe.statusCode === 405) continue;
      missing.push(`${route.method} ${route.url}`);
    }
    expect(missing).toEqual([]);
  });

  it('gives every documented operation a summary and a described response', () => {
    const incomplete: string[] = [];
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item) as [string, OpenApiOperation][]) {
        const responses = Object.values(op.responses ?? {});
        if (!op.summary || responses.length === 0 || responses.some((r) => !r.description)) incomplete.push(`${method.toUpperCase()} ${path}`);
      }
    }
    expect(incomplete).toEqual([]);
  });

  it('leaves out pages, assets and operations endpoints unless a route opts in with tags', () => {
    for (const [path, item] of Object.entries(doc.paths)) {
      if (path.startsWith('/api/') || path.startsWith('/.well-known/')) continue;
      for (const op of Object.values(item) as OpenApiOperation[]) expect(op.tags?.length, `${path} is documented without tags`).toBeGreaterThan(0);
    }
    for (const hidden of ['/healthz', '/readyz', '/metrics', '/api/openapi.json', '/api/docs']) expect(doc.paths).not.toHaveProperty([hidden]);
  });

  it('can be fetched by API tools on other origins', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/openapi.json', headers: { origin: 'https://editor.example' } });
    expect(res.headers['access-control-allow-origin']).toBe('*');
  });
});

describe('API reference page at /api/docs', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t.close());

  it('is a server-rendered page, without scripts of its own, under the strict CSP, listing every documented operation', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/docs' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('text/html');
    expect(res.headers['content-security-policy']).toContain("script-src 'self'");
    // No swagger-ui: the only script is the site shell's own (a11y.js, served from /assets/), none inline.
    expect([...res.body.matchAll(/<script\b[^>]*>/g)].map((m) => m[0])).toEqual([expect.stringMatching(/^<script src="\/assets\/a11y\.[0-9a-f]{12}\.js" defer>$/)]);
    expect(res.body).toContain('Gatehouse API reference');
    expect(res.body).toContain('href="/api/openapi.json"');
    const doc = (await t.app.inject({ method: 'GET', url: '/api/openapi.json' })).json<OpenApiDocument>();
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const method of Object.keys(item)) expect(res.body).toContain(`id="${operationAnchor(method, path)}"`);
    }
  });

  it('gives every operation an anchor of its own (a path parameter never meets a literal segment of its name)', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/api/openapi.json' })).json<OpenApiDocument>();
    const anchors = Object.entries(doc.paths).flatMap(([path, item]) => Object.keys(item).map((method) => operationAnchor(method, path)));
    expect(new Set(anchors).size).toBe(anchors.length);
    expect(operationAnchor('post', '/api/v1/webhooks/{id}/{token}')).not.toBe(operationAnchor('post', '/api/v1/webhooks/{id}/token'));
  });

  it('documents each error body once, and every error status of every operation links to it', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/docs' });
    const doc = (await t.app.inject({ method: 'GET', url: '/api/openapi.json' })).json<OpenApiDocument>();
    const bodies = [...res.body.matchAll(/<h3 id="(error-[a-z0-9-]+)">([^<]*)<\/h3>/g)].map((m) => ({ anchor: m[1] as string, title: m[2] as string }));
    expect(bodies.map((b) => b.title)).toEqual(expect.arrayContaining(['An API error', 'An OAuth 2.0 error (RFC 6749 §5.2)']));
    // Once each: no two sections for one title.
    expect(new Set(bodies.map((b) => b.title)).size).toBe(bodies.length);
    let errorStatuses = 0;
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item as Record<string, OpenApiOperation>)) {
        const card = res.body.slice(res.body.indexOf(`id="${operationAnchor(method, path)}"`));
        const table = card.slice(card.indexOf('<h4>Responses</h4>'), card.indexOf('</article>'));
        for (const status of Object.keys(op.responses ?? {}).filter((s) => Number(s) >= 400)) {
          errorStatuses += 1;
          // `404 … Not Found · <a href="#error-…">`, with no table of the body's fields repeated.
          expect(table).toMatch(new RegExp(`<code>${status}</code></td><td>[^<]+ · <a href="#(${bodies.map((b) => b.anchor).join('|')})">`));
        }
      }
    }
    expect(errorStatuses).toBeGreaterThan(50);
  });
});

describe('documentedRoutesOnly (which routes the document describes)', () => {
  it('keeps /api and /.well-known routes, hides pages unless they carry tags', () => {
    expect(documentedRoutesOnly({ schema: { summary: 'x' }, url: '/api/v1/users/@me' }).schema).toEqual({ summary: 'x' });
    expect(documentedRoutesOnly({ schema: undefined, url: '/.well-known/oauth-authorization-server' }).schema).toEqual({});
    expect(documentedRoutesOnly({ schema: { summary: 'Sign in' }, url: '/login' }).schema).toEqual({ summary: 'Sign in', hide: true });
    expect(documentedRoutesOnly({ schema: { tags: ['OAuth2'] }, url: '/app/oauth2/authorize' }).schema).toEqual({ tags: ['OAuth2'] });
  });

  it('applied to @fastify/swagger, leaves a page route out and keeps an API route', async () => {
    const app = Fastify();
    await app.register(swagger, { openapi: { openapi: '3.1.0', info: { title: 't', version: '1' } }, transform: documentedRoutesOnly });
    app.get('/login', async () => 'page');
    app.get('/api/v1/things/:id', { schema: { summary: 'A thing' } }, async () => ({}));
    await app.ready();
    const paths = (app.swagger() as unknown as OpenApiDocument).paths;
    expect(Object.keys(paths)).toEqual(['/api/v1/things/{id}']);
    await app.close();
  });
});

describe('renderApiReference', () => {
  const doc: OpenApiDocument = {
    info: { title: 'Gatehouse API', version: '1', description: 'OAuth & webhooks' },
    servers: [{ url: 'https://chat.example' }],
    tags: [{ name: 'Webhooks', description: 'Post to a channel with a URL.' }, { name: 'OAuth2' }],
    components: {
      schemas: { Message: { type: 'object', properties: { id: { type: 'string', description: 'Snowflake' } }, required: ['id'] } },
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
    },
    paths: {
      '/api/v1/webhooks/{id}/{token}': {
        post: {
          tags: ['Webhooks'],
          summary: 'Execute a webhook',
          parameters: [
            { name: 'id', in: 'path', required: true, schema: { type: 'string' } },
            { name: 'wait', in: 'query', schema: { type: 'boolean', default: false }, description: 'Answer with the message' },
          ],
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  required: ['content'],
                  properties: {
                    content: { type: 'string', maxLength: 2000, description: 'Text <b>as is</b>' },
                    embeds: { type: 'array', maxItems: 10, items: { type: 'object', properties: { title: { type: 'string', maxLength: 256 } } } },
                    username: { anyOf: [{ type: 'string' }, { type: 'null' }] },
                  },
                },
              },
            },
          },
          responses: { '200': { description: 'The message', content: { 'application/json': { schema: { $ref: '#/components/schemas/Message' } } } }, '204': { description: 'Posted' } },
        },
      },
      '/api/oauth2/token': { post: { tags: ['OAuth2'], summary: 'Exchange a code', security: [{ bearer: [] }], responses: { '200': { description: 'Tokens' } } } },
      '/api/v1/misc': { get: { responses: { '200': { description: 'ok' } } } },
    },
  };
  const page = renderApiReference(doc, { serviceName: 'Gatehouse', documentUrl: '/api/openapi.json' });

  it('groups operations by tag in the declared order, untagged ones last under "Other"', () => {
    const webhooks = page.indexOf('<h2 id="tag-tag-webhooks">Webhooks</h2>');
    const oauth = page.indexOf('<h2 id="tag-tag-oauth2">OAuth2</h2>');
    const other = page.indexOf('<h2 id="tag-tag-other">Other</h2>');
    expect(webhooks).toBeGreaterThan(0);
    expect(oauth).toBeGreaterThan(webhooks);
    expect(other).toBeGreaterThan(oauth);
    expect(page).toContain('Post to a channel with a URL.');
  });

  it('shows method, path, summary, parameters, request body fields with constraints, and responses', () => {
    expect(page).toContain('id="post-api-v1-webhooks-by-id-by-token"');
    expect(page).toContain('<code>/api/v1/webhooks/{id}/{token}</code>');
    expect(page).toContain('Execute a webhook');
    expect(page).toMatch(/<code>wait<\/code>[\s\S]*?query[\s\S]*?boolean[\s\S]*?Answer with the message[\s\S]*?default false/);
    expect(page).toMatch(/<code>content<\/code> <span class="muted">required<\/span>[\s\S]*?at most 2000 characters/);
    expect(page).toContain('<code>embeds[].title</code>');
    expect(page).toContain('string or null');
    expect(page).toMatch(/<code>200<\/code>[\s\S]*?The message[\s\S]*?<code>id<\/code>[\s\S]*?Snowflake/);
    expect(page).toContain('<span class="pill">bearer</span>');
  });

  it('escapes every text taken from the document', () => {
    expect(page).toContain('Text &lt;b&gt;as is&lt;/b&gt;');
    expect(page).toContain('OAuth &amp; webhooks');
    expect(page).not.toContain('<b>as is</b>');
  });

  it('describes types in words', () => {
    expect(describeType({ type: 'array', items: { type: 'string', format: 'uri' } })).toBe('array of string (uri)');
    expect(describeType({ enum: ['code', 'token'] })).toBe('one of: code, token');
    expect(describeType(undefined)).toBe('any');
  });
});
