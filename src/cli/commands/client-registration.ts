import { cliActing } from '../../core/acting.js';
import { ApiError } from '../../core/errors.js';
import { parseExpiresIn } from '../../modules/client-registration/client-registration.js';
import { REGISTER_PATH } from '../../modules/oauth/metadata.js';
import { mintRegistrationToken } from '../../modules/client-registration/client-registration.service.js';
import type { CliCommand } from '../command.js';

/** `gatehouse apps registration-token` (issue #41 §3; docs/oauth.md §Registration). */
export const clientRegistrationCommands: CliCommand[] = [
  {
    name: 'apps registration-token',
    summary: 'mint an initial access token for dynamic client registration (GATEHOUSE_CLIENT_REGISTRATION=token); printed once, stored hashed',
    flags: {
      'expires-in': { description: 'how long it works: 30m, 12h, 7d (default) … or never' },
    },
    async run(services, flags) {
      const text = flags.string('expires-in') ?? '7d';
      const expiresIn = parseExpiresIn(text);
      if (expiresIn === undefined) throw new ApiError(400, 50035, `--expires-in must be minutes, hours or days such as 30m, 12h or 7d, or never (got "${text}").`);
      const minted = await mintRegistrationToken(services, cliActing(services.clock), expiresIn);
      return {
        id: minted.id,
        registration_token: minted.token,
        expires_at: minted.expiresAt === null ? null : new Date(minted.expiresAt).toISOString(),
        registration_endpoint: `${services.config.baseUrl}${REGISTER_PATH}`,
        client_registration: services.config.clientRegistration,
      };
    },
  },
];
