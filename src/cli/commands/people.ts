import { cliActing } from '../../core/acting.js';
import { registerPerson } from '../../modules/accounts/accounts.service.js';
import type { CliCommand } from '../command.js';

/** `gatehouse people …` (DESIGN §8). */
export const peopleCommands: CliCommand[] = [
  {
    name: 'people create',
    summary: 'create a person who signs in with a password',
    flags: {
      username: { description: '2–32 letters, digits, _ and . (unique ignoring case)', required: true },
      password: { description: 'at least 8 characters', required: true },
      email: { description: 'e-mail address (optional)' },
      name: { description: 'display name (defaults to the username)' },
    },
    async run(services, flags) {
      // The same rules as the sign-up page: a bad value exits non-zero with every field error.
      const person = await registerPerson(services, cliActing(services.clock), {
        username: flags.string('username') ?? '',
        password: flags.string('password') ?? '',
        email: flags.string('email') ?? null,
        name: flags.string('name') ?? '',
      });
      return { id: person.id, username: person.username, global_name: person.name, email: person.email, created_at: new Date(person.createdAt).toISOString() };
    },
  },
];
