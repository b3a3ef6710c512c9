/**
 * Route schemas compiled on each route's first use instead of at start-up, so that a restarted
 * server serves sooner (issue #7 §1; docs/performance.md §Lazy schemas).
 * Invariant: Fastify's own compilers with the same options, so the same errors, coercion and
 * serialization as eager compilation; a schema that cannot compile fails its route's first request.
 * Tested by test/http/lazy-schemas.test.ts; test/reliability/fuzz.test.ts walks every route.
 */
import AjvCompiler from '@fastify/ajv-compiler';
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import type { FastifyServerOptions } from 'fastify';

/**
 * Route schemas compiled on a route's first use instead of at start-up.
 *
 * Fastify compiles every route's validators (Ajv) and response serializers (fast-json-stringify)
 * before it listens: on a two-core machine ~0.4 s of a ~1.8 s start, i.e. of the time a crashed
 * server takes to serve again (issue #7 §1: within 2 s of the spawn). These are Fastify's own compilers with the same options; only *when* each schema is
 * compiled changes: the first request of each route (and status code) pays a few milliseconds.
 *
 * A validator is called as Fastify calls Ajv's: with the parent object when `schemaEnv` is set,
 * so Ajv may coerce a whole request part in place, and with `errors` read after a `false`.
 */
type Compiled = ((...args: unknown[]) => unknown) & { errors?: unknown; schemaEnv?: unknown };
type CompilerFactory = (...factoryArgs: never[]) => (routeSchema: never) => Compiled;

function lazyValidators(buildValidator: CompilerFactory): CompilerFactory {
  return (...factoryArgs) => {
    const compile = buildValidator(...factoryArgs);
    return (routeSchema) => {
      let validate: Compiled | undefined;
      const lazy: Compiled = (data, parent) => {
        validate ??= compile(routeSchema);
        const valid = parent === undefined ? validate(data) : validate(data, parent);
        lazy.errors = validate.errors;
        return valid;
      };
      // Fastify passes { parentData, parentDataProperty } only to functions that have schemaEnv.
      lazy.schemaEnv = true;
      lazy.errors = null;
      return lazy;
    };
  };
}

function lazySerializers(buildSerializer: CompilerFactory): CompilerFactory {
  return (...factoryArgs) => {
    const compile = buildSerializer(...factoryArgs);
    return (routeSchema) => {
      let serialize: Compiled | undefined;
      return (payload) => (serialize ??= compile(routeSchema))(payload);
    };
  };
}

/** The `schemaController` option of a Fastify instance whose route schemas compile on first use. */
export function lazySchemaController(): NonNullable<FastifyServerOptions['schemaController']> {
  return {
    compilersFactory: {
      buildValidator: lazyValidators(AjvCompiler() as unknown as CompilerFactory) as never,
      buildSerializer: lazySerializers(SerializerSelector() as unknown as CompilerFactory) as never,
    },
  };
}
