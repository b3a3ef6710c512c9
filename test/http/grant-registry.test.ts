import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GRANT_TYPES, TOKEN_PARAMETERS } from '../../src/modules/oauth/grants/registry.js';
import { createTestApp, type TestApp } from '../support/app.js';

// Issue #37 §3: the grant registry is the one list of grant types. Everything that names them is
// made from it, so a grant added in one place only (a hard-coded metadata list, a literal
// comparison in the endpoint, a hand-written enum) fails here.

const TOKEN = '/api/oauth2/token';
const form = (body: string) => ({ method: 'POST' as const, url: TOKEN, payload: body, headers: { 'content-type': 'application/x-www-form-urlencoded' } });

interface OpenApiSchema {
  properties?: Record<string, { enum?: string[]; description?: string }>;
}

describe('the grant registry is the single source of the grant types (issue #37 §3)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t.close());

  it('grant_types_supported in the RFC 8414 and OpenID Connect metadata documents is the registry, in its order', async () => {
    expect(GRANT_TYPES.length).toBeGreaterThan(0);
    for (const url of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']) {
      const res = await t.app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(200);
      expect((res.json() as { grant_types_supported: unknown }).grant_types_supported, url).toEqual(GRANT_TYPES);
    }
  });

  it('the token endpoint runs every registered grant type (the client is checked next) and names exactly the registry in unsupported_grant_type', async () => {
    for (const grantType of GRANT_TYPES) {
      const res = await t.app.inject(form(`grant_type=${encodeURIComponent(grantType)}`));
      expect(res.json(), grantType).toMatchObject({ error: 'invalid_client' });
    }
    // Names a plain object would inherit are not grant types either.
    for (const grantType of ['password', 'implicit', 'urn:ietf:params:oauth:grant-type:jwt-bearer', 'constructor', '__proto__', 'toString']) {
      const res = await t.app.inject(form(`grant_type=${encodeURIComponent(grantType)}&client_id=1`));
      expect(res.statusCode, grantType).toBe(400);
      const body = res.json() as { error: string; error_description: string };
      expect(body.error, grantType).toBe('unsupported_grant_type');
      const named = body.error_description.replace(/^grant_type must be /, '').split(/, | or /);
      expect(named, grantType).toEqual(GRANT_TYPES);
    }
  });

  it("the API reference's token request lists the registry as grant_type's enum and documents exactly the parameters the endpoint reads", async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/api/openapi.json' })).json() as {
      paths: Record<string, { post?: { requestBody?: { content?: Record<string, { schema?: OpenApiSchema }> } } }>;
    };
    const schema = doc.paths[TOKEN]?.post?.requestBody?.content?.['application/x-www-form-urlencoded']?.schema;
    expect(schema?.properties?.['grant_type']?.enum).toEqual(GRANT_TYPES);
    expect(Object.keys(schema?.properties ?? {})).toEqual(TOKEN_PARAMETERS);
  });

  it('the enum documents, it does not validate: an unknown grant type still gets RFC 6749 §5.2 unsupported_grant_type, not a schema error', async () => {
    const res = await t.app.inject(form('grant_type=password&client_id=1&client_secret=x'));
    expect(res.json()).toMatchObject({ error: 'unsupported_grant_type' });
  });

  it('repeated parameters are checked in the order the endpoint always used: grant_type, the code grant, the client, then refresh', async () => {
    const repeated = async (names: string[]) => (await t.app.inject(form(names.flatMap((n) => [`${n}=a`, `${n}=b`]).join('&')))).json() as { error_description: string };
    expect(await repeated(['refresh_token', 'client_id'])).toMatchObject({ error_description: 'client_id must not be repeated' });
    expect(await repeated(['client_secret', 'code_verifier'])).toMatchObject({ error_description: 'code_verifier must not be repeated' });
    expect(await repeated(['scope', 'grant_type'])).toMatchObject({ error_description: 'grant_type must not be repeated' });
  });
});
