import { cliActing } from '../../core/acting.js';
import { listPublishedKeys, rotateSigningKeys } from '../../modules/oidc/oidc-keys.service.js';
import { updateOpenIdClientSettings } from '../../modules/oidc/oidc.service.js';
import { CliUsageError, type CliCommand } from '../command.js';

/** `gatehouse keys …` and `gatehouse apps openid` (issue #22; docs/oidc.md). */
export const oidcCommands: CliCommand[] = [
  {
    name: 'keys rotate',
    summary: 'new ID-token signing keys (RS256 and ES256): published now, signing once every cached JWKS holds them (signs_from); the old ones sign until then and stay published until every token they signed has expired',
    flags: {},
    async run(services) {
      const rotated = await rotateSigningKeys(services, cliActing(services.clock));
      return { rotated: rotated.map((r) => ({ alg: r.alg, kid: r.kid, signs_from: new Date(r.signsFrom).toISOString(), retired: r.retired })) };
    },
  },
  {
    name: 'keys list',
    summary: 'the published ID-token signing keys: kid, algorithm, created, retired (when it stops signing, possibly ahead), whether it signs now, whether the private part is encrypted',
    flags: {},
    async run(services) {
      const keys = await listPublishedKeys(services);
      return {
        keys: keys.map((k) => ({
          kid: k.kid,
          alg: k.alg,
          created_at: new Date(k.createdAt).toISOString(),
          retired_at: k.retiredAt === null ? null : new Date(k.retiredAt).toISOString(),
          signing: k.signing,
          encrypted: k.encrypted,
        })),
      };
    },
  },
  {
    name: 'apps openid',
    summary: "set an application's OpenID Connect settings: ID token algorithm (RS256 default, ES256) and post-logout redirect URIs",
    flags: {
      app: { description: 'the application (client) id', required: true },
      'id-token-alg': { description: 'RS256 or ES256' },
      'post-logout-redirect-uri': { description: 'an exact post_logout_redirect_uri; replaces the list (repeatable)', repeatable: true },
      'clear-post-logout-redirect-uris': { description: 'remove every post-logout redirect URI', boolean: true },
    },
    async run(services, flags) {
      const id = flags.string('app') ?? '';
      const uris = flags.list('post-logout-redirect-uri');
      if (uris.length > 0 && flags.bool('clear-post-logout-redirect-uris')) throw new CliUsageError('--post-logout-redirect-uri and --clear-post-logout-redirect-uris exclude each other');
      // An unknown or malformed id: 404 10002 Unknown Application, from the service.
      const settings = await updateOpenIdClientSettings(services, cliActing(services.clock), id, {
        idTokenAlg: flags.string('id-token-alg'),
        postLogoutRedirectUris: flags.bool('clear-post-logout-redirect-uris') ? [] : uris.length > 0 ? uris : undefined,
      });
      return { client_id: id, id_token_signed_response_alg: settings.idTokenAlg, post_logout_redirect_uris: settings.postLogoutRedirectUris };
    },
  },
];
