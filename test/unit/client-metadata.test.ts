import { describe, expect, it } from 'vitest';
import { checkMetadataDocument, checkMetadataUrl, documentLifetimeMs, isUrlClientId, metadataHost } from '../../src/modules/client-metadata/client-metadata.js';

const URL_ID = 'https://mcp-client.example/oauth/client.json';
const doc = (body: unknown, type = 'application/json') => checkMetadataDocument(Buffer.from(JSON.stringify(body)), type, URL_ID, 'Gatehouse');

describe('client ID metadata documents, the rules (draft-ietf-oauth-client-id-metadata-document)', () => {
  it('a client_id is a document URL when it starts with http(s)://; an application id is not', () => {
    expect(isUrlClientId(URL_ID)).toBe(true);
    expect(isUrlClientId('1234567890123456789')).toBe(false);
  });

  it.each([
    ['https with a path', URL_ID, true, true],
    ['a query is allowed', `${URL_ID}?v=2`, true, true],
    ['no path', 'https://mcp-client.example/', true, false],
    ['a fragment', `${URL_ID}#x`, true, false],
    ['user information', 'https://me:pw@mcp-client.example/c.json', true, false],
    ['a dot segment', 'https://mcp-client.example/a/../c.json', true, false],
    ['a single dot segment', 'https://mcp-client.example/./c.json', true, false],
    ['plain http on a public host', 'http://mcp-client.example/c.json', true, false],
    ['plain http on loopback when private addresses are allowed', 'http://127.0.0.1:8000/c.json', true, true],
    ['plain http on loopback otherwise', 'http://127.0.0.1:8000/c.json', false, false],
    ['not a URL', 'https://', true, false],
  ])('the URL: %s', (_name, url, allowLoopbackHttp, ok) => {
    expect(checkMetadataUrl(url, allowLoopbackHttp).ok).toBe(ok);
  });

  it('a document: JSON object, served as JSON, client_id equal to its URL, redirect_uris required, public only', () => {
    expect(doc({ client_id: URL_ID, client_name: 'Agent', redirect_uris: ['http://127.0.0.1/cb'] })).toEqual({ ok: true, value: { client_name: 'Agent', redirect_uris: ['http://127.0.0.1/cb'] } });
    expect(doc({ client_id: URL_ID, redirect_uris: ['https://a.example/cb'] }, 'application/vnd.example+json; charset=utf-8').ok).toBe(true);
    expect(doc({ client_id: URL_ID, redirect_uris: ['https://a.example/cb'] }, 'text/plain').ok).toBe(false);
    expect(doc({ client_id: `${URL_ID}/`, redirect_uris: ['https://a.example/cb'] }).ok).toBe(false);
    expect(doc({ client_id: URL_ID }).ok).toBe(false);
    expect(doc({ client_id: URL_ID, redirect_uris: ['https://a.example/cb'], token_endpoint_auth_method: 'client_secret_basic' }).ok).toBe(false);
    expect(doc({ client_id: URL_ID, redirect_uris: ['https://a.example/cb'], client_secret: 's' }).ok).toBe(false);
    expect(doc([URL_ID]).ok).toBe(false);
  });

  it.each([
    [undefined, 5 * 60_000],
    ['max-age=600', 600_000],
    ['public, max-age=5', 60_000],
    ['max-age=9999999', 24 * 60 * 60_000],
    ['no-store', 60_000],
    ['no-cache, max-age=600', 60_000],
  ])('Cache-Control %s keeps the document %i ms', (header, ms) => {
    expect(documentLifetimeMs(header)).toBe(ms);
  });

  it('the consent screen’s host keeps a port', () => {
    expect(metadataHost('https://mcp-client.example:8443/c.json')).toBe('mcp-client.example:8443');
  });
});
