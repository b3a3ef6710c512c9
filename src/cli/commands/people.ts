import { cliActing } from '../../core/acting.js';
import { registerPerson } from '../../modules/accounts/accounts.service.js';
import { markEmailVerified } from '../../modules/accounts/email-verification.service.js';
import { operatorResetLink, setPasswordByOperator } from '../../modules/accounts/password-reset.service.js';
import { resetSecondFactors } from '../../modules/mfa/mfa.service.js';
import { CliUsageError, type CliCommand, type ParsedFlags } from '../command.js';
import { confirmDestructive } from '../confirm.js';
import {
  deletePersonByOperator,
  disableEffects,
  disablePerson,
  enablePerson,
  findPersonForOperator,
  listPeopleForOperator,
  personSummary,
  setAdministrator,
  type AdministeredPerson,
} from '../../modules/accounts/people-admin.service.js';
import { accountDeletionPreview } from '../../modules/accounts/account-deletion.service.js';
import { createSignUpLink } from '../../modules/accounts/sign-ups.service.js';
import { transferServer } from '../../modules/directory/server-transfer.service.js';
import type { Services } from '../../services.js';

function iso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}

/** A person as the operator's commands print them (the API's snake_case names, DESIGN §8). */
function personRecord(person: AdministeredPerson): Record<string, unknown> {
  return {
    id: person.id,
    username: person.username,
    global_name: person.name,
    email: person.email,
    verified: person.emailVerified,
    admin: person.admin,
    disabled: person.disabledAt !== null,
    disabled_at: iso(person.disabledAt),
    disabled_reason: person.disabledReason,
    created_at: iso(person.createdAt),
    signup_address: person.signupAddress,
  };
}

const WHO = {
  username: { description: 'the person, by username' },
  id: { description: 'the person, by id' },
};

/** The person named by --username or --id (exactly one of them). */
function named(services: Services, flags: ParsedFlags): Promise<AdministeredPerson> {
  const username = flags.string('username');
  const id = flags.string('id');
  if ((username === undefined) === (id === undefined)) throw new CliUsageError('give --username or --id');
  return findPersonForOperator(services, { username, id });
}

function whole(flags: ParsedFlags, name: string): number | undefined {
  const raw = flags.string(name);
  if (raw === undefined) return undefined;
  if (!/^\d{1,9}$/.test(raw)) throw new CliUsageError(`--${name} must be a whole number`);
  return Number(raw);
}

function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

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
  {
    name: 'people list',
    summary: 'list people, newest first; search by username, name, e-mail or sign-up address (issue #39)',
    flags: {
      query: { description: 'part of a username, display name, e-mail or sign-up address (ignoring case)' },
      disabled: { description: 'only disabled people', boolean: true },
      admins: { description: 'only administrators', boolean: true },
      limit: { description: 'people per page, 1–200 (default 50)' },
      after: { description: "the previous page's next (a person's id)" },
      page: { description: 'page number from 1, instead of --after' },
    },
    async run(services, flags) {
      const page = await listPeopleForOperator(services, {
        query: flags.string('query'),
        disabled: flags.bool('disabled'),
        admins: flags.bool('admins'),
        limit: whole(flags, 'limit'),
        after: flags.string('after'),
        page: whole(flags, 'page'),
      });
      return { people: page.people.map(personRecord), next: page.next ?? null };
    },
  },
  {
    name: 'people show',
    summary: "a person: account, servers, apps, sessions, grants and recent security events (issue #39)",
    flags: WHO,
    async run(services, flags) {
      const person = await named(services, flags);
      const summary = await personSummary(services, person.id);
      return {
        ...personRecord(summary.person),
        mfa_enabled: summary.secondFactor,
        servers: summary.servers.map((s) => ({ id: s.id, name: s.name, owner: s.ownerId === person.id })),
        apps: summary.apps.map((a) => ({ id: a.id, name: a.name, bot: a.botUserId !== null })),
        sessions: summary.sessions.map((s) => ({ device: s.device, address: s.address, signed_in_at: iso(s.signedInAt), last_used_at: iso(s.lastUsedAt) })),
        grants_in_force: summary.grantsInForce,
        recent_security_events: summary.recentSecurityEvents.map((e) => ({ id: e.id, action: e.action, at: iso(e.createdAt), address: e.address, reason: e.reason })),
      };
    },
  },
  {
    name: 'people disable',
    summary: 'disable a person: no sign-in, every session and OAuth grant ended, their apps’ bots inert until enabled (issue #39)',
    flags: { ...WHO, reason: { description: 'why (kept in the audit log, not shown to the person)' }, yes: { description: 'confirm without asking', boolean: true } },
    async run(services, flags) {
      const person = await named(services, flags);
      if (person.disabledAt === null) {
        const effects = await disableEffects(services, person.id);
        await confirmDestructive(
          `Disabling @${person.username} ends ${plural(effects.sessions, 'session', 'sessions')} and ${plural(effects.grants, 'OAuth grant', 'OAuth grants')} (not restored by enabling), and stops the bots of ${plural(effects.botApps, 'app', 'apps')} until enabled.`,
          flags.bool('yes'),
        );
      }
      const result = await disablePerson(services, cliActing(services.clock, flags.string('reason') ?? null), person.id, flags.string('reason') ?? null);
      return { ...personRecord(result.person), changed: result.disabled, ended_sessions: result.endedSessions, revoked_apps: result.revokedApps };
    },
  },
  {
    name: 'people enable',
    summary: 'enable a disabled person again (their revoked grants stay revoked) (issue #39)',
    flags: WHO,
    async run(services, flags) {
      const person = await named(services, flags);
      const result = await enablePerson(services, cliActing(services.clock), person.id);
      return { ...personRecord(result.person), changed: result.enabled };
    },
  },
  {
    name: 'people admin',
    summary: 'make a person an instance administrator, or with --revoke no longer one (issue #39)',
    flags: { ...WHO, revoke: { description: 'remove the administrator role instead', boolean: true } },
    async run(services, flags) {
      const person = await named(services, flags);
      const result = await setAdministrator(services, cliActing(services.clock), person.id, !flags.bool('revoke'));
      return { ...personRecord(result.person), changed: result.changed };
    },
  },
  {
    name: 'people delete',
    summary: "delete a person's account: apps, bots, grants, memberships; messages stay as by a deleted account (issue #39)",
    flags: { ...WHO, 'transfer-servers-to': { description: 'first make this member the owner of each server they own (as servers transfer does)' }, yes: { description: 'confirm without asking', boolean: true } },
    async run(services, flags) {
      const person = await named(services, flags);
      let preview = await accountDeletionPreview(services, person.id);
      const heir = flags.string('transfer-servers-to');
      if (heir !== undefined && preview.ownedServers.length > 0) {
        const names = preview.ownedServers.map((s) => s.name).join(', ');
        await confirmDestructive(`@${heir} becomes the owner of ${plural(preview.ownedServers.length, 'server', 'servers')} (${names}), then @${person.username} is deleted.`, flags.bool('yes'));
        // Issue #39: each transfer is its own audited change; a refused one stops here, the account stays.
        for (const server of preview.ownedServers) await transferServer(services, cliActing(services.clock), server.id, { username: heir });
        preview = await accountDeletionPreview(services, person.id);
      }
      if (preview.ownedServers.length > 0) {
        const names = preview.ownedServers.map((s) => `${s.name} (${s.id})`).join(', ');
        throw new CliUsageError(`@${person.username} owns ${plural(preview.ownedServers.length, 'server', 'servers')}: ${names}. Transfer or delete them first (gatehouse servers transfer|delete), or give --transfer-servers-to <username>.`);
      }
      await confirmDestructive(
        `Deleting @${person.username} removes ${plural(preview.apps, 'app', 'apps')} with their bots, ${plural(preview.authorizedApps, 'authorized app', 'authorized apps')} and ${plural(preview.memberships, 'server membership', 'server memberships')}; their messages stay, shown as by a deleted account.`,
        flags.bool('yes'),
      );
      await deletePersonByOperator(services, cliActing(services.clock), person.id);
      return { id: person.id, username: person.username, deleted: true, apps: preview.apps, authorized_apps: preview.authorizedApps, memberships: preview.memberships };
    },
  },
  {
    name: 'people invite',
    summary: 'print a single-use sign-up link (7 days) for when GATEHOUSE_SIGN_UPS is invite or closed (issue #39)',
    flags: { email: { description: 'the address it is for (noted only; no mail is sent)' } },
    async run(services, flags) {
      const link = await createSignUpLink(services, cliActing(services.clock), { email: flags.string('email') });
      return { signup_url: link.url, email: link.email, expires_at: new Date(link.expiresAt).toISOString(), sign_ups: services.config.signUps };
    },
  },
];
