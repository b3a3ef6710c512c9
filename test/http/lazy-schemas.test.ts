import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { lazySchemaController } from '../../src/http/lazy-schemas.js';

/**
 * src/http/lazy-schemas.ts: route schemas compile on a route's first use, so a restarted server
 * listens sooner (issue #7 §1, docs/performance.md §Lazy schemas), and behave exactly as
 * Fastify's own compilers (same Ajv options as src/app.ts). Every route of the real app is
 * walked by test/reliability/fuzz.test.ts, where a schema that failed to compile would be a 500.
 */
let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

function build(lazy: boolean): FastifyInstance {
  return Fastify({
    ajv: { customOptions: { allErrors: true, coerceTypes: 'array', removeAdditional: false } },
    ...(lazy ? { schemaController: lazySchemaController() } : {}),
  });
}

/** A schema Ajv refuses to compile: its keyword value has the wrong type. */
const UNCOMPILABLE = { type: 'object', required: 'not-an-array' };

describe('route schemas compiled on first use', () => {
  it('nothing is compiled before the server is ready: a schema Ajv refuses fails only its own route, on its first request', async () => {
    const eager = build(false);
    eager.post('/broken', { schema: { body: UNCOMPILABLE } }, async () => ({}));
    await expect(eager.ready()).rejects.toThrow(/Failed building the validation schema/);
    await eager.close();

    app = build(true);
    app.post('/broken', { schema: { body: UNCOMPILABLE } }, async () => ({}));
    app.get('/fine', async () => ({ ok: true }));
    await app.ready();
    expect((await app.inject({ method: 'GET', url: '/fine' })).statusCode).toBe(200);
    expect((await app.inject({ method: 'POST', url: '/broken', payload: {} })).statusCode).toBe(500);
  });

  it('a validator reports every error of the request part, as Ajv does with allErrors', async () => {
    app = build(true);
    const schema = { type: 'object', required: ['name', 'count'], properties: { name: { type: 'string', minLength: 2 }, count: { type: 'integer' } } };
    app.post('/things', { schema: { body: schema } }, async () => ({}));
    const first = await app.inject({ method: 'POST', url: '/things', payload: { name: 'x', count: 'many' } });
    expect(first.statusCode).toBe(400);
    expect(first.json().message).toMatch(/body\/name must NOT have fewer than 2 characters, body\/count must be integer/);
    // The second call runs the compiled validator directly; its errors are those of this call.
    const second = await app.inject({ method: 'POST', url: '/things', payload: { name: 'xy' } });
    expect(second.json().message).toBe("body must have required property 'count'");
    expect((await app.inject({ method: 'POST', url: '/things', payload: { name: 'xy', count: 3 } })).statusCode).toBe(200);
  });

  it('a validator coerces query-string values as Ajv does (coerceTypes "array")', async () => {
    app = build(true);
    const schema = { type: 'object', properties: { n: { type: 'integer' }, tags: { type: 'array', items: { type: 'string' } } } };
    app.get('/coerce', { schema: { querystring: schema } }, async (request) => request.query);
    const answer = await app.inject({ method: 'GET', url: '/coerce?n=5&tags=one' });
    expect(answer.json()).toEqual({ n: 5, tags: ['one'] });
  });

  it('a serializer writes only what the response schema names, per status code', async () => {
    app = build(true);
    const body = { type: 'object', properties: { id: { type: 'string' } } };
    app.get('/record', { schema: { response: { 200: body, 404: { type: 'object', properties: { code: { type: 'integer' } } } } } }, async (request, reply) => {
      if ((request.query as { missing?: string }).missing) return reply.code(404).send({ code: 10008, secret: 'never sent' });
      return { id: '42', secret: 'never sent' };
    });
    expect((await app.inject({ method: 'GET', url: '/record' })).json()).toEqual({ id: '42' });
    expect((await app.inject({ method: 'GET', url: '/record?missing=1' })).json()).toEqual({ code: 10008 });
  });
});
