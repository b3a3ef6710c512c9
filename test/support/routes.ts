import type { FastifyInstance } from 'fastify';

export interface RegisteredRoute {
  method: string;
  url: string;
}

/**
 * Every route of an app, read from Fastify's own route tree (printRoutes), so checks that must
 * cover every route (OpenAPI completeness, fuzzing, CSRF and header walks) see the routes later
 * issues add without anyone listing them.
 */
export function registeredRoutes(app: FastifyInstance): RegisteredRoute[] {
  const routes: RegisteredRoute[] = [];
  const stack: string[] = [];
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const branch = /[├└]── /.exec(line);
    if (!branch) continue;
    const depth = branch.index / 4;
    const match = /^(.*?)(?: \(([A-Z, ]+)\))?$/.exec(line.slice(branch.index + 4)) as RegExpExecArray;
    stack.length = depth;
    stack.push(match[1] as string);
    const url = stack.join('');
    for (const method of match[2]?.split(', ') ?? []) routes.push({ method, url });
  }
  return routes;
}
