import { cliActing } from '../../core/acting.js';
import { addResourceServer, listResourceServers, removeResourceServer, type ResourceServer } from '../../modules/resource-servers/resource-servers.service.js';
import type { CliCommand } from '../command.js';

/** A resource server as the CLI prints it (snake_case, DESIGN §8). */
function record(server: ResourceServer): Record<string, unknown> {
  return {
    id: server.id,
    application_id: server.applicationId,
    identifier: server.identifier,
    scopes: server.scopes.map((s) => ({ name: s.name, description: s.description })),
    access_token_format: server.accessTokenFormat,
    delegated_scopes: server.delegatedScopes,
    created_at: new Date(server.createdAt).toISOString(),
  };
}

/** `gatehouse apps resource add|list|remove` (issue #41 §1; docs/oauth.md §Resource servers). */
export const resourceServerCommands: CliCommand[] = [
  {
    name: 'apps resource add',
    summary: 'declare an API the application serves (RFC 8707 resource): its identifier URL and the scopes it defines, each with its consent-screen line',
    flags: {
      app: { description: 'the application (client) id', required: true },
      identifier: { description: 'the resource indicator clients send: an https URL (http only on 127.0.0.1 or [::1])', required: true },
      scope: { description: 'a scope the API defines (repeatable)', repeatable: true, required: true },
      'scope-description': { description: 'what the scope allows, in the order of --scope, completing "This app will be able to …" (repeatable)', repeatable: true },
      delegate: { description: "a Gatehouse scope the app may use for the person who authorized a token for this API, through token exchange (RFC 8693): identify, email or guilds (repeatable)", repeatable: true },
      jwt: { description: 'RFC 9068 JWT access tokens (signed with the OpenID Connect keys, 5 minutes) the API verifies itself, instead of opaque ones', boolean: true },
    },
    async run(services, flags) {
      const server = await addResourceServer(services, cliActing(services.clock), flags.string('app') ?? '', {
        identifier: flags.string('identifier') ?? '',
        scopes: flags.list('scope'),
        scopeDescriptions: flags.list('scope-description'),
        jwtAccessTokens: flags.bool('jwt'),
        delegatedScopes: flags.list('delegate'),
      });
      return record(server);
    },
  },
  {
    name: 'apps resource list',
    summary: "the application's resource servers: id, identifier, scopes",
    flags: { app: { description: 'the application (client) id', required: true } },
    async run(services, flags) {
      const servers = await listResourceServers(services, { kind: 'operator' }, flags.string('app') ?? '');
      return { resource_servers: servers.map(record) };
    },
  },
  {
    name: 'apps resource remove',
    summary: 'remove a resource server: every authorization and token for it ends at once',
    flags: {
      app: { description: 'the application (client) id', required: true },
      identifier: { description: 'the resource server, by identifier or id', required: true },
    },
    async run(services, flags) {
      const removed = await removeResourceServer(services, cliActing(services.clock), flags.string('app') ?? '', flags.string('identifier') ?? '');
      return { removed: record(removed) };
    },
  },
];
