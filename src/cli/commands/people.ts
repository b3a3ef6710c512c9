import { cliActing } from '../../core/acting.js';
import { registerPerson } from '../../modules/accounts/accounts.service.js';
import { markEmailVerified } from '../../modules/accounts/email-verification.service.js';
import { operatorResetLink, setPasswordByOperator } from '../../modules/accounts/password-reset.service.js';
import { resetSecondFactors } from '../../modules/mfa/mfa.service.js';
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
  {
    name: 'people verify-email',
    summary: "mark a person's current e-mail address verified (issue #38 §2)",
    flags: { username: { description: 'the person whose address to mark verified', required: true } },
    async run(services, flags) {
      const person = await markEmailVerified(services, cliActing(services.clock), flags.string('username') ?? '');
      return { id: person.id, username: person.username, email: person.email, verified: person.emailVerified };
    },
  },
  {
    name: 'people set-password',
    summary: "set a person's password (sign-up's rules) and end every session of theirs (issue #38 §3)",
    flags: {
      username: { description: 'the person whose password to set', required: true },
      password: { description: 'at least 8 characters', required: true },
    },
    async run(services, flags) {
      const set = await setPasswordByOperator(services, cliActing(services.clock), { username: flags.string('username') ?? '', password: flags.string('password') ?? '' });
      return { id: set.person.id, username: set.person.username, ended_sessions: set.endedSessions };
    },
  },
  {
    name: 'people reset-password',
    summary: 'print a one-time link (30 minutes) where the person chooses a new password, no mail needed (issue #38 §3)',
    flags: { username: { description: 'the person who chooses a new password', required: true } },
    async run(services, flags) {
      const link = await operatorResetLink(services, cliActing(services.clock), flags.string('username') ?? '');
      return { id: link.person.id, username: link.person.username, reset_url: link.resetUrl, expires_at: new Date(link.expiresAt).toISOString() };
    },
  },
  {
    name: 'people reset-mfa',
    summary: "remove a person's authenticator app and recovery codes, for one who lost them (issue #38 §3)",
    flags: { username: { description: 'the person whose second factors to remove', required: true } },
    async run(services, flags) {
      const reset = await resetSecondFactors(services, cliActing(services.clock), flags.string('username') ?? '');
      return { id: reset.person.id, username: reset.person.username, removed: reset.removed };
    },
  },
];
