import { cliActing } from '../../core/acting.js';
import { createApplication, findOwnerByUsername } from '../../modules/applications/applications.service.js';
import { enableBot } from '../../modules/applications/bots.service.js';
import type { CliCommand } from '../command.js';

/** `gatehouse apps …` (DESIGN §8). */
export const appsCommands: CliCommand[] = [
  {
    name: 'apps create',
    summary: 'register an OAuth2 application; prints its client id and (once) its client secret and bot token',
    flags: {
      owner: { description: 'username of the person who owns the application', required: true },
      name: { description: '2–32 characters, shown on the consent screen', required: true },
      'redirect-uri': { description: 'an exact redirect URI (https, or http://127.0.0.1 / http://[::1])', repeatable: true },
      public: { description: 'a public client: no client secret, PKCE S256 required', boolean: true },
      description: { description: 'up to 400 characters' },
      'private-bot': { description: 'only the owner may install the bot', boolean: true },
      'require-code-grant': { description: 'bot installs need the full authorization code flow', boolean: true },
      bot: { description: 'also add the bot account; prints bot_user_id and (once) bot_token', boolean: true },
    },
    async run(services, flags) {
      const owner = await findOwnerByUsername(services, flags.string('owner') ?? '');
      // The same rules as the portal: a bad value exits non-zero with every field error.
      const { application, clientSecret } = await createApplication(services, cliActing(services.clock), {
        ownerId: owner.id,
        name: flags.string('name') ?? '',
        description: flags.string('description') ?? '',
        redirectUris: flags.list('redirect-uri'),
        confidential: !flags.bool('public'),
        botPublic: !flags.bool('private-bot'),
        botRequireCodeGrant: flags.bool('require-code-grant'),
      });
      // The bot token exists in plaintext only in this output: only its hash is stored.
      const bot = flags.bool('bot') ? await enableBot(services, cliActing(services.clock), application.id) : undefined;
      // DESIGN §8: the API's field names (snake_case, as docs/api-resources.md).
      return {
        id: application.id,
        client_id: application.id,
        client_secret: clientSecret,
        name: application.name,
        redirect_uris: application.redirectUris,
        confidential: application.confidential,
        bot_public: application.botPublic,
        bot_require_code_grant: application.botRequireCodeGrant,
        ...(bot ? { bot_user_id: bot.botUserId, bot_token: bot.token } : {}),
      };
    },
  },
];
