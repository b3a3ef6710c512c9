import { codePoints } from '../../core/checked.js';
import { ALL_PERMISSIONS, formatPermissions, Permission } from '../../core/permissions.js';
import { USERNAME_MAX_LENGTH } from '../directory/people.js';
import { generateAuthorizeLink, type Application, type GeneratorRequest, type GeneratorResult } from './applications.js';

/**
 * Pure rules for bots (issue #4 "Bots in the developer portal"): the bot account's username and
 * the Bot authorization header. No Fastify, no Kysely.
 */

/** What a bot's username is built from when the app's name has no usable letters. */
const FALLBACK_USERNAME = 'bot';

/**
 * A username for an app's bot account, derived from the app's name so people recognise it:
 * accents dropped, lower-cased, anything outside [a-z0-9_.] turned into '_', runs collapsed,
 * no '.' or '_' at either end, 2–32 characters (people.ts USERNAME_PATTERN). `attempt` > 1 adds a
 * numeric suffix (`_2`, `_3`, …) for when the plain name is taken; the suffix always fits.
 */
export function botUsername(appName: string, attempt = 1): string {
  let base = appName
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9_.]+/g, '_')
    .replace(/\.{2,}/g, '.')
    .replace(/_{2,}/g, '_')
    .replace(/^[._]+|[._]+$/g, '');
  if (base.length < 2) base = FALLBACK_USERNAME;
  const suffix = attempt > 1 ? `_${attempt}` : '';
  base = base.slice(0, USERNAME_MAX_LENGTH - suffix.length).replace(/[._]+$/g, '');
  if (base.length < 2) base = FALLBACK_USERNAME;
  return `${base}${suffix}`;
}

// DESIGN §1: `Authorization: Bot <token>`, scheme case-insensitive. Tokens are [A-Za-z0-9_-].
const BOT_AUTHORIZATION = /^bot[ ]+([A-Za-z0-9_-]+)[ ]*$/i;

/** The token of a `Bot <token>` header, or undefined for anything else (Bearer included). */
export function parseBotAuthorization(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const match = BOT_AUTHORIZATION.exec(header.trim());
  return match ? match[1] : undefined;
}

/** Issue #4 "Commands": at most 100 commands per application (Discord's limit for chat commands). */
export const COMMANDS_MAX = 100;
export const COMMAND_NAME_MAX = 32;
export const COMMAND_DESCRIPTION_MAX = 100;
/** Discord's limit of options per command (and per sub-command). */
export const COMMAND_OPTIONS_MAX = 25;
/** Discord's application command type 1: a chat input ("slash") command. */
export const COMMAND_TYPE_CHAT_INPUT = 1;
/** Discord's option types: 1 sub-command … 11 attachment. */
const OPTION_TYPE_MIN = 1;
const OPTION_TYPE_MAX = 11;

/**
 * Command and option names: 1–32 of letters, digits, '-' and '_', lower case. Letters from any
 * script are accepted, as on Discord, but a letter that has a lower-case form must be written in
 * it (so "Ping" is refused rather than silently changed). docs/bots.md, "Commands".
 */
const COMMAND_NAME_PATTERN = /^[-_\p{L}\p{N}]{1,32}$/u;

// Controls, bidi overrides and zero-width characters: invisible where commands are listed.
const INVISIBLE = /[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u2028-\u202e\u2060-\u2064\ufeff]/;

/** A command as the bulk-overwrite body gives it, after checking. */
export interface CommandInput {
  name: string;
  description: string;
  /** Discord-style option objects, kept as sent (each has at least name, description, type). */
  options: Record<string, unknown>[];
  type: number;
  /**
   * Discord's `default_member_permissions`: the permission bits (decimal, as sent) a member needs
   * to use the command in a server; "0": administrators only; null: anyone who may use commands.
   */
  defaultMemberPermissions: string | null;
  /** Discord's `integration_types` as a bit set (bit n: value n listed); null: not sent, every install type. */
  integrationTypes: number | null;
  /** Discord's `contexts` as a bit set; null: not sent, every context. */
  contexts: number | null;
}

/** Discord's install types (`integration_types`): 0 server install, 1 user install. */
export const COMMAND_INTEGRATION_TYPES = [0, 1] as const;
/** Discord's interaction contexts (`contexts`): 0 server channel, 1 DM with the app's bot, 2 group DM. */
export const COMMAND_CONTEXTS = [0, 1, 2] as const;

/** Where a composer reaches a command: a server channel (its server's install) or a DM with the bot (the person's user install). */
export type CommandPlace = 'server' | 'bot-dm';

/**
 * Whether a command may run in `place` (issue #40 §2): its `integration_types` must list the
 * install that reaches it there (0 server, 1 user) and its `contexts` the place (0 server
 * channel, 1 DM with the bot).
 */
export function commandAvailable(command: Pick<CommandView, 'integrationTypes' | 'contexts'>, place: CommandPlace): boolean {
  const value = place === 'server' ? 0 : 1;
  return command.integrationTypes.includes(value) && (command.contexts === null || command.contexts.includes(value));
}

/**
 * Whether a member holding `held` in the server may use a command with Discord's
 * `default_member_permissions` (issue #40 §2): every bit it names that Gatehouse knows (held
 * counts every bit for the owner and Administrators); "0" is for administrators only.
 */
export function memberMayUse(defaultMemberPermissions: string | null, held: bigint): boolean {
  if (defaultMemberPermissions === null) return true;
  if ((held & Permission.ADMINISTRATOR) !== 0n || held === ALL_PERMISSIONS) return true;
  const needed = neededPermissions(defaultMemberPermissions);
  return needed !== 0n && (held & needed) === needed;
}

/** The bits of a `default_member_permissions` Gatehouse checks; 0n: administrators only (also for bits it does not know). */
export function neededPermissions(defaultMemberPermissions: string): bigint {
  return BigInt(defaultMemberPermissions) & ALL_PERMISSIONS;
}

/** The values of a bit set, ascending (Discord's list form). */
function listOf(set: number): number[] {
  return [0, 1, 2].filter((value) => (set & (1 << value)) !== 0);
}

/** A stored command. */
export interface ApplicationCommand extends CommandInput {
  id: string;
  applicationId: string;
  createdAt: number;
  /** The server of a guild command; null: a global command. */
  guildId: string | null;
}

/** The JSON resource of a command (camelCase, DESIGN §1). */
export interface CommandView {
  id: string;
  applicationId: string;
  name: string;
  description: string;
  options: Record<string, unknown>[];
  type: number;
  defaultMemberPermissions: string | null;
  /** Discord's lists; integration types default to both (Gatehouse runs a command under either install). */
  integrationTypes: number[];
  contexts: number[] | null;
  /** The server of a guild command; null: global. */
  guildId: string | null;
}

export function presentCommand(command: ApplicationCommand): CommandView {
  return {
    id: command.id,
    applicationId: command.applicationId,
    name: command.name,
    description: command.description,
    options: command.options,
    type: command.type,
    defaultMemberPermissions: command.defaultMemberPermissions,
    integrationTypes: listOf(command.integrationTypes ?? 0b11),
    contexts: command.contexts === null ? null : listOf(command.contexts),
    guildId: command.guildId,
  };
}

/**
 * The commands apps offer in one server, from their global ones and those registered for that
 * server: a guild command replaces its app's global command of the same name there (the text
 * composer runs one command per name; Discord would list both). Keeps the order given.
 */
export function offeredInServer<T extends { applicationId: string; name: string; guildId: string | null }>(commands: readonly T[]): T[] {
  const key = (c: T) => `${c.applicationId} ${c.name}`;
  const replaced = new Set(commands.filter((c) => c.guildId !== null).map(key));
  return commands.filter((c) => c.guildId !== null || !replaced.has(key(c)));
}

/** Orders commands by name, code point by code point (the same on every database). */
export function byName(a: { name: string }, b: { name: string }): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/** One field problem at a path of the body (Discord's 50035 tree is built from these). */
export interface CommandProblem {
  path: (string | number)[];
  code: string;
  message: string;
}

/**
 * A required string of 1–`max` code points (`blankIsEmpty`: only blanks counts as empty); the
 * problem at `path` otherwise, with Discord's codes.
 */
function checkText(value: unknown, path: (string | number)[], problems: CommandProblem[], max: number, blankIsEmpty: boolean): string | undefined {
  if (value === undefined || value === null) {
    problems.push({ path, code: 'BASE_TYPE_REQUIRED', message: 'This field is required' });
    return undefined;
  }
  if (typeof value !== 'string') {
    problems.push({ path, code: 'BASE_TYPE_BAD_TYPE', message: 'Must be a string.' });
    return undefined;
  }
  const length = codePoints(value);
  if (length < 1 || length > max || (blankIsEmpty && value.trim() === '')) {
    problems.push({ path, code: 'BASE_TYPE_BAD_LENGTH', message: `Must be between 1 and ${max} in length.` });
    return undefined;
  }
  return value;
}

function checkName(value: unknown, path: (string | number)[], problems: CommandProblem[]): string | undefined {
  const name = checkText(value, path, problems, COMMAND_NAME_MAX, false);
  if (name === undefined) return undefined;
  if (!COMMAND_NAME_PATTERN.test(name) || name !== name.toLowerCase()) {
    problems.push({ path, code: 'APPLICATION_COMMAND_INVALID_NAME', message: 'Use only lower-case letters, digits, "-" and "_".' });
    return undefined;
  }
  return name;
}

function checkDescription(value: unknown, path: (string | number)[], problems: CommandProblem[]): string | undefined {
  const description = checkText(value, path, problems, COMMAND_DESCRIPTION_MAX, true);
  if (description === undefined) return undefined;
  if (INVISIBLE.test(description)) {
    problems.push({ path, code: 'BASE_TYPE_INVALID', message: 'Must not contain control or invisible characters.' });
    return undefined;
  }
  return description;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function checkOptions(value: unknown, path: (string | number)[], problems: CommandProblem[]): Record<string, unknown>[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    problems.push({ path, code: 'BASE_TYPE_BAD_TYPE', message: 'Must be an array.' });
    return [];
  }
  if (value.length > COMMAND_OPTIONS_MAX) {
    problems.push({ path, code: 'BASE_TYPE_MAX_LENGTH', message: `Must be ${COMMAND_OPTIONS_MAX} or fewer in length.` });
    return [];
  }
  const seen = new Set<string>();
  const options: Record<string, unknown>[] = [];
  value.forEach((option: unknown, index) => {
    const at = [...path, index];
    if (!isObject(option)) {
      problems.push({ path: at, code: 'BASE_TYPE_BAD_TYPE', message: 'Must be an object.' });
      return;
    }
    const name = checkName(option['name'], [...at, 'name'], problems);
    checkDescription(option['description'], [...at, 'description'], problems);
    const type = option['type'];
    if (typeof type !== 'number' || !Number.isInteger(type) || type < OPTION_TYPE_MIN || type > OPTION_TYPE_MAX) {
      problems.push({ path: [...at, 'type'], code: 'BASE_TYPE_CHOICES', message: `Must be an option type from ${OPTION_TYPE_MIN} to ${OPTION_TYPE_MAX}.` });
    }
    if (name !== undefined) {
      if (seen.has(name)) problems.push({ path: [...at, 'name'], code: 'APPLICATION_COMMAND_OPTIONS_NAME_ALREADY_EXISTS', message: 'Option names must be unique within a command.' });
      seen.add(name);
    }
    options.push(option);
  });
  return options;
}

/**
 * Discord's `default_member_permissions`: a permission bit set, as a decimal string (or a whole
 * number), under 2^64; kept as sent, in decimal. Absent or null: null.
 */
function checkMemberPermissions(value: unknown, path: (string | number)[], problems: CommandProblem[]): string | null {
  if (value === undefined || value === null) return null;
  const text = typeof value === 'number' && Number.isSafeInteger(value) ? String(value) : typeof value === 'string' ? value.trim() : '';
  if (!/^[0-9]{1,20}$/.test(text) || BigInt(text) >= 1n << 64n) {
    problems.push({ path, code: 'BASE_TYPE_BAD_TYPE', message: 'Must be a permission bit set: a whole number as a string, e.g. "32".' });
    return null;
  }
  return BigInt(text).toString();
}

/** Discord's `integration_types` or `contexts`: a non-empty list of distinct values of `allowed`, as a bit set. Absent or null: null. */
function checkValueList(value: unknown, path: (string | number)[], problems: CommandProblem[], allowed: readonly number[]): number | null {
  if (value === undefined || value === null) return null;
  if (!Array.isArray(value) || value.length === 0) {
    problems.push({ path, code: 'BASE_TYPE_BAD_TYPE', message: `Must be a non-empty array of ${allowed.join(', ')}.` });
    return null;
  }
  let set = 0;
  value.forEach((item: unknown, index) => {
    if (typeof item !== 'number' || !allowed.includes(item)) problems.push({ path: [...path, index], code: 'BASE_TYPE_CHOICES', message: `Must be one of ${allowed.join(', ')}.` });
    else set |= 1 << item;
  });
  return set;
}

/**
 * Checks the body of PUT /api/v1/applications/{id}/commands (issue #4 "Commands"): an array of
 * at most 100 commands, each {name, description, options?, type?}; names unique. Where and by
 * whom a command may be used, as Discord's fields say (issue #40 §2): `default_member_permissions`,
 * `integration_types`, `contexts`, and the older `dm_permission` (false: not in DMs, when
 * `contexts` is not sent). Other keys (name_localizations, nsfw, …) are ignored (DESIGN §1:
 * lenient input). Every problem is reported at once, at its path in the body.
 */
export function checkCommands(body: unknown): { ok: true; value: CommandInput[] } | { ok: false; problems: CommandProblem[] } {
  const problems: CommandProblem[] = [];
  if (!Array.isArray(body)) return { ok: false, problems: [{ path: [], code: 'BASE_TYPE_ARRAY', message: 'Must be an array of commands.' }] };
  if (body.length > COMMANDS_MAX) return { ok: false, problems: [{ path: [], code: 'BASE_TYPE_MAX_LENGTH', message: `Must be ${COMMANDS_MAX} or fewer in length.` }] };
  const seen = new Set<string>();
  const commands: CommandInput[] = [];
  body.forEach((item: unknown, index) => {
    const command = checkCommandObject(item, [index], problems);
    // A valid name is checked for repeats even when another field of its command is refused.
    const name = command?.name ?? (isObject(item) ? checkName(item['name'], [], []) : undefined);
    if (name !== undefined) {
      if (seen.has(name)) problems.push({ path: [index, 'name'], code: 'APPLICATION_COMMANDS_DUPLICATE_NAME', message: `Another command in this list is also named "${name}".` });
      seen.add(name);
    }
    if (command) commands.push(command);
  });
  return problems.length > 0 ? { ok: false, problems } : { ok: true, value: commands };
}

/** One command, as POST /api/v1/applications/{id}/commands and its PATCH (merged) take it; problems at their paths in it. */
export function checkCommand(body: unknown): { ok: true; value: CommandInput } | { ok: false; problems: CommandProblem[] } {
  const problems: CommandProblem[] = [];
  const command = checkCommandObject(body, [], problems);
  return command && problems.length === 0 ? { ok: true, value: command } : { ok: false, problems };
}

/** One command object at `at` of a body: its fields checked (every problem added), or undefined. */
function checkCommandObject(item: unknown, at: (string | number)[], problems: CommandProblem[]): CommandInput | undefined {
  if (!isObject(item)) {
    problems.push({ path: at, code: 'BASE_TYPE_BAD_TYPE', message: 'Must be an object.' });
    return undefined;
  }
  const name = checkName(item['name'], [...at, 'name'], problems);
  const description = checkDescription(item['description'], [...at, 'description'], problems);
  const options = checkOptions(item['options'], [...at, 'options'], problems);
  const rawType = item['type'] ?? COMMAND_TYPE_CHAT_INPUT;
  if (rawType !== COMMAND_TYPE_CHAT_INPUT) {
    problems.push({ path: [...at, 'type'], code: 'BASE_TYPE_CHOICES', message: 'Only chat input commands (type 1) are supported.' });
  }
  const defaultMemberPermissions = checkMemberPermissions(item['default_member_permissions'], [...at, 'default_member_permissions'], problems);
  const integrationTypes = checkValueList(item['integration_types'], [...at, 'integration_types'], problems, COMMAND_INTEGRATION_TYPES);
  const listedContexts = checkValueList(item['contexts'], [...at, 'contexts'], problems, COMMAND_CONTEXTS);
  const dmPermission = item['dm_permission'];
  if (dmPermission !== undefined && dmPermission !== null && typeof dmPermission !== 'boolean') problems.push({ path: [...at, 'dm_permission'], code: 'BASE_TYPE_BAD_TYPE', message: 'Must be a boolean.' });
  // Discord: dm_permission false keeps a command out of DMs; `contexts`, its successor, wins when sent.
  const contexts = listedContexts ?? (dmPermission === false ? 1 << 0 : null);
  if (name === undefined || description === undefined) return undefined;
  return { name, description, options, type: COMMAND_TYPE_CHAT_INPUT, defaultMemberPermissions, integrationTypes, contexts };
}

/**
 * A stored command as the body that would make it, with `changes` (a PATCH body) laid over it:
 * what PATCH /api/v1/applications/{id}/commands/{command_id} checks as a whole. A `dm_permission`
 * without `contexts` replaces the stored contexts, as it would have on creation.
 */
export function patchedCommandBody(command: ApplicationCommand, changes: Record<string, unknown>): Record<string, unknown> {
  const stored = {
    name: command.name,
    description: command.description,
    options: command.options,
    type: command.type,
    default_member_permissions: command.defaultMemberPermissions,
    integration_types: command.integrationTypes === null ? null : listOf(command.integrationTypes),
    contexts: command.contexts === null ? null : listOf(command.contexts),
  };
  const contexts = 'dm_permission' in changes && !('contexts' in changes) ? { contexts: null } : {};
  return { ...stored, ...contexts, ...changes };
}

/** Scopes that install something and need no redirect back to the app (SPEC §1.3, §5.2). */
export const INSTALL_SCOPES: readonly string[] = ['bot', 'applications.commands'];

export interface InstallGeneratorRequest extends GeneratorRequest {
  /** The permissions ticked in the picker; sent as `permissions` with the bot scope. */
  permissions: bigint;
}

/**
 * The URL generator with bots (issue #4): with the bot scope the link carries
 * `permissions=<decimal>` (Discord's bit positions). When only install scopes are ticked and no
 * redirect URI is chosen, the link is a plain install — no response_type, no redirect_uri, no
 * code (issue #4 "Without response_type=code …") — unless the app requires full OAuth2
 * authorization for its bot, which needs redirect_uri and response_type=code.
 */
export function generateInstallAwareLink(
  baseUrl: string,
  app: Pick<Application, 'id' | 'redirectUris' | 'botRequireCodeGrant'>,
  offered: readonly string[],
  request: InstallGeneratorRequest,
): GeneratorResult {
  const ticked = new Set(request.scopes);
  const scopes = offered.filter((s) => ticked.has(s));
  const withBot = scopes.includes('bot');
  const permissions = withBot ? `&permissions=${formatPermissions(request.permissions)}` : '';
  const installOnly = scopes.length > 0 && scopes.every((s) => INSTALL_SCOPES.includes(s));
  const codeRequired = withBot && app.botRequireCodeGrant;
  const noRedirect = request.redirectUri === undefined || request.redirectUri === '';

  if (installOnly && !codeRequired && noRedirect) {
    const problems = [...ticked].some((s) => !offered.includes(s)) ? ['Some of the scopes are not offered and were left out.'] : [];
    const query = `client_id=${encodeURIComponent(app.id)}${permissions}&scope=${encodeURIComponent(scopes.join(' '))}`;
    return { scopes, redirectUri: undefined, link: `${baseUrl.replace(/\/+$/, '')}/app/oauth2/authorize?${query}`, problems };
  }

  const result = generateAuthorizeLink(baseUrl, app, offered, request);
  if (codeRequired && noRedirect && app.redirectUris.length !== 1) {
    result.problems.push('This bot requires full OAuth2 authorization: its install link must carry a redirect URI and response_type=code.');
  }
  return result.link === undefined ? result : { ...result, link: `${result.link}${permissions}` };
}
