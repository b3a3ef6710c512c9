import { codePoints } from '../../core/checked.js';
import { formatPermissions } from '../../core/permissions.js';
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
}

/** A stored command. */
export interface ApplicationCommand extends CommandInput {
  id: string;
  applicationId: string;
  createdAt: number;
}

/** The JSON resource of a command (camelCase, DESIGN §1). */
export interface CommandView {
  id: string;
  applicationId: string;
  name: string;
  description: string;
  options: Record<string, unknown>[];
  type: number;
}

export function presentCommand(command: ApplicationCommand): CommandView {
  return { id: command.id, applicationId: command.applicationId, name: command.name, description: command.description, options: command.options, type: command.type };
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
 * Checks the body of PUT /api/v1/applications/{id}/commands (issue #4 "Commands"): an array of
 * at most 100 commands, each {name, description, options?, type?}; names unique. Unknown keys
 * (Discord's name_localizations, default_member_permissions, …) are ignored (DESIGN §1: lenient
 * input). Every problem is reported at once, at its path in the body.
 */
export function checkCommands(body: unknown): { ok: true; value: CommandInput[] } | { ok: false; problems: CommandProblem[] } {
  const problems: CommandProblem[] = [];
  if (!Array.isArray(body)) return { ok: false, problems: [{ path: [], code: 'BASE_TYPE_ARRAY', message: 'Must be an array of commands.' }] };
  if (body.length > COMMANDS_MAX) return { ok: false, problems: [{ path: [], code: 'BASE_TYPE_MAX_LENGTH', message: `Must be ${COMMANDS_MAX} or fewer in length.` }] };
  const seen = new Set<string>();
  const commands: CommandInput[] = [];
  body.forEach((item: unknown, index) => {
    if (!isObject(item)) {
      problems.push({ path: [index], code: 'BASE_TYPE_BAD_TYPE', message: 'Must be an object.' });
      return;
    }
    const name = checkName(item['name'], [index, 'name'], problems);
    const description = checkDescription(item['description'], [index, 'description'], problems);
    const options = checkOptions(item['options'], [index, 'options'], problems);
    const rawType = item['type'] ?? COMMAND_TYPE_CHAT_INPUT;
    if (rawType !== COMMAND_TYPE_CHAT_INPUT) {
      problems.push({ path: [index, 'type'], code: 'BASE_TYPE_CHOICES', message: 'Only chat input commands (type 1) are supported.' });
    }
    if (name !== undefined) {
      if (seen.has(name)) problems.push({ path: [index, 'name'], code: 'APPLICATION_COMMANDS_DUPLICATE_NAME', message: `Another command in this list is also named "${name}".` });
      seen.add(name);
    }
    if (name !== undefined && description !== undefined) commands.push({ name, description, options, type: COMMAND_TYPE_CHAT_INPUT });
  });
  return problems.length > 0 ? { ok: false, problems } : { ok: true, value: commands };
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
