import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolver, type JsonSchema, type OpenApiDocument, type OpenApiOperation } from '../../src/http/openapi-document.js';
import { operationAnchor, publicText, renderApiReference } from '../../src/http/openapi.page.js';
import { createTestApp, type TestApp } from '../support/app.js';

/** What a reader of /api/docs sees: the page's text, without its markup. */
function visibleText(page: string): string {
  return page.replace(/<[^>]*>/g, ' ').replace(/&quot;/g, '"').replace(/&amp;/g, '&').replace(/&#39;/g, "'").replace(/\s+/g, ' ');
}

/** The object a schema holds: itself, its object alternative, or the items of an array of them. */
function objectFields(schema: JsonSchema | undefined): { prefix: string; names: string[] } | undefined {
  const own = schema?.properties ? schema : schema?.anyOf?.find((s) => s.properties);
  if (own?.properties) return { prefix: '', names: Object.keys(own.properties) };
  if (schema?.items?.properties) return { prefix: '[].', names: Object.keys(schema.items.properties) };
  return undefined;
}

/**
 * Issue #36 §5: the API reference at /api/docs shows the fields of every answer (lists and
 * nullable objects included) and none of the repository's internal references (SPEC and DESIGN
 * sections, issue numbers, docs/ pages), which its readers cannot open.
 */
describe('the API reference page (/api/docs)', () => {
  let t: TestApp;
  let doc: OpenApiDocument;
  let page: string;
  beforeAll(async () => {
    t = await createTestApp();
    doc = (await t.app.inject({ method: 'GET', url: '/api/openapi.json' })).json<OpenApiDocument>();
    page = (await t.app.inject({ method: 'GET', url: '/api/docs' })).body;
  });
  afterAll(async () => t.close());

  it('names no SPEC or DESIGN section, issue number or file of the repository', () => {
    const text = visibleText(page);
    expect(text.match(/\b(?:SPEC|DESIGN) §[^ ]*|Issue #\d+|\bdocs\/[\w-]+\.md|\bsrc\/[\w/.-]+/gi) ?? []).toEqual([]);
    // What the references stood beside stays, and public standards are still cited.
    expect(text).toContain("Discord's user object. Scope identify gives id");
    expect(text).toContain('An OAuth 2.0 error (RFC 6749 §5.2)');
  });

  it('lists the fields of every answer that has fields, a list answer’s as [].name', () => {
    const resolve = resolver(doc);
    const missing: string[] = [];
    let answers = 0;
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item as Record<string, OpenApiOperation>)) {
        const start = page.indexOf(`id="${operationAnchor(method, path)}"`);
        const card = page.slice(start, page.indexOf('</article>', start));
        const responses = card.slice(card.indexOf('<h4>Responses</h4>'));
        for (const [status, response] of Object.entries(op.responses ?? {})) {
          if (Number(status) >= 400) continue; // error bodies are listed once, in their own section
          const fields = objectFields(resolve(Object.values(response.content ?? {})[0]?.schema));
          if (!fields) continue;
          answers += 1;
          for (const name of fields.names) {
            if (!responses.includes(`<code>${fields.prefix}${name}</code>`)) missing.push(`${method.toUpperCase()} ${path} ${status}: ${fields.prefix}${name}`);
          }
        }
      }
    }
    expect(answers).toBeGreaterThan(20);
    expect(missing).toEqual([]);
  });
});

describe('publicText (what the reference shows of a description)', () => {
  it('leaves out SPEC, DESIGN and issue references and docs/ pages, and keeps the sentence and public standards', () => {
    expect(publicText('SPEC §2.5: Discord’s user object.')).toBe('Discord’s user object.');
    expect(publicText('Issue #4 bulk overwrite: the body is the list.')).toBe('Bulk overwrite: the body is the list.');
    expect(publicText('An API error (docs/errors.md)')).toBe('An API error');
    expect(publicText('The ID token (a JWS; docs/oidc.md)')).toBe('The ID token (a JWS)');
    expect(publicText('Every answer carries X-RateLimit-Bucket; SPEC §8: 10 requests per 2 s (docs/webhooks.md "Rate limits").')).toBe('Every answer carries X-RateLimit-Bucket; 10 requests per 2 s.');
    expect(publicText('RFC 6749 token endpoint (SPEC §2.2–2.3). Form-urlencoded only.')).toBe('RFC 6749 token endpoint. Form-urlencoded only.');
    expect(publicText('name 1–80 characters')).toBe('name 1–80 characters');
    expect(publicText('An OAuth 2.0 error (RFC 6749 §5.2)')).toBe('An OAuth 2.0 error (RFC 6749 §5.2)');
  });
});

describe('renderApiReference: the fields of an answer', () => {
  const answer = (schema: JsonSchema): string =>
    renderApiReference(
      { info: { title: 'T', version: '1' }, paths: { '/api/v1/things': { get: { responses: { '200': { description: 'OK', content: { 'application/json': { schema } } } } } } } },
      { serviceName: 'Gatehouse', documentUrl: '/api/openapi.json' },
    );
  const thing: JsonSchema = { type: 'object', required: ['id'], properties: { id: { type: 'string' }, owner: { anyOf: [{ type: 'object', properties: { name: { type: 'string' } } }, { type: 'null' }] } } };

  it('lists the fields of a nullable object as those of any other', () => {
    expect(answer(thing)).toContain('<code>owner.name</code>');
  });

  it('lists the fields of a list answer’s items as [].name', () => {
    const page = answer({ type: 'array', items: thing });
    expect(page).toContain('<code>[].id</code>');
    expect(page).toContain('<code>[].owner.name</code>');
  });
});
