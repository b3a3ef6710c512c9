import { codePoints } from '../../core/checked.js';
import type { ErrorTree } from '../../core/errors.js';
import { isSnowflake } from '../../core/snowflake.js';
import type { Embed } from '../messages/embed.js';
import { parseMessagePayload } from '../messages/message-payload.js';
import type { BucketRule } from '../../rate-limit/bucket.js';

/**
 * Pure rules for commands invoked from the chat (issue #40 §2): reading `/name option:value …`
 * from the composer, typing the options by the command's option types, building Discord's
 * APPLICATION_COMMAND interaction and checking the app's answer. No Fastify, no Kysely.
 */

/** Discord's interaction types and callback types used here. */
export const InteractionType = { APPLICATION_COMMAND: 2 } as const;
export const CallbackType = { CHANNEL_MESSAGE_WITH_SOURCE: 4, DEFERRED_CHANNEL_MESSAGE_WITH_SOURCE: 5 } as const;
/** Discord's message flag EPHEMERAL (1 << 6): only the invoker sees the message. */
export const EPHEMERAL = 64;
/** Discord's message flag LOADING (1 << 7): a deferred answer's placeholder, "<App> is thinking…". */
export const LOADING = 128;
/**
 * Discord's interaction tokens begin with the base64 of "interaction:"; here that prefix also
 * tells the webhook URL routes that the token is an interaction's, not a webhook's.
 */
export const INTERACTION_TOKEN_PREFIX = 'aW50ZXJhY3Rpb246';
/** Discord: an interaction token is valid for 15 minutes. */
export const INTERACTION_TOKEN_TTL_MS = 15 * 60_000;

/**
 * Issue #40 §2 rate limits. Follow-ups and callbacks: per app and channel, as a webhook's URL
 * (SPEC §8: 10 per 2 s), with the same X-RateLimit-* headers. Invocations from the chat: per app
 * and channel (a busy channel cannot flood an app) and per person and app (one person cannot).
 */
export const FOLLOWUP_RULE: BucketRule = { limit: 10, windowMs: 2000, neverReset: true };
export const INVOKE_CHANNEL_RULE: BucketRule = { limit: 20, windowMs: 10_000, neverReset: true };
export const INVOKE_PERSON_RULE: BucketRule = { limit: 5, windowMs: 10_000, neverReset: true };

export function followupBucketKey(applicationId: string, channelId: string): string {
  return `ia-followup:${applicationId}:${channelId}`;
}
export function invokeChannelBucketKey(applicationId: string, channelId: string): string {
  return `ia-invoke:${applicationId}:${channelId}`;
}
export function invokePersonBucketKey(applicationId: string, personId: string): string {
  return `ia-person:${applicationId}:${personId}`;
}

/** Discord's message content limit, which an answer must keep to. */
const CONTENT_MAX = 2000;

/** Discord's application command option types (the ones a chat command's leaf options use). */
const OptionType = { STRING: 3, INTEGER: 4, BOOLEAN: 5, USER: 6, CHANNEL: 7, ROLE: 8, MENTIONABLE: 9, NUMBER: 10 } as const;

/** A composer message read as a command: its name and what followed it. */
export interface SlashInput {
  name: string;
  rest: string;
}

/** `/name …` → the name (lower case, as commands are stored) and the rest; undefined when the message is not one. */
export function parseSlashInput(content: string): SlashInput | undefined {
  const match = /^\/([-_\p{L}\p{N}]{1,32})(?:\s+([\s\S]*))?$/u.exec(content.trim());
  if (!match) return undefined;
  return { name: (match[1] as string).toLowerCase(), rest: (match[2] ?? '').trim() };
}

/** One typed option as Discord sends it in `data.options`. */
export interface TypedOption {
  name: string;
  type: number;
  value: string | number | boolean;
}

export type OptionsResult = { ok: true; options: TypedOption[] } | { ok: false; message: string };

/**
 * `name:value` pairs, a value quoted with "…" when it holds spaces (Discord's composer writes
 * options the same way). Undefined when something is not a pair.
 */
function splitPairs(rest: string): Array<[string, string]> | undefined {
  const pairs: Array<[string, string]> = [];
  const pattern = /\s*([-_\p{L}\p{N}]{1,32}):(?:"((?:[^"\\]|\\.)*)"|(\S*))/uy;
  let at = 0;
  while (at < rest.length) {
    pattern.lastIndex = at;
    const match = pattern.exec(rest);
    if (!match) return undefined;
    pairs.push([(match[1] as string).toLowerCase(), match[2] !== undefined ? match[2].replace(/\\(.)/g, '$1') : (match[3] ?? '')]);
    at = pattern.lastIndex;
    while (at < rest.length && /\s/.test(rest[at] as string)) at += 1;
  }
  return pairs;
}

/** A mention (`<@id>`, `<@!id>`, `<#id>`, `<@&id>`) or a bare id → the id. */
function idOf(value: string): string | undefined {
  const id = /^<(?:@!?|#|@&)(\d+)>$/.exec(value)?.[1] ?? value;
  return isSnowflake(id) ? id : undefined;
}

function typed(option: Record<string, unknown>, raw: string): { ok: true; value: string | number | boolean } | { ok: false; why: string } {
  const type = Number(option.type);
  switch (type) {
    case OptionType.STRING: {
      const length = codePoints(raw);
      const min = typeof option.min_length === 'number' ? option.min_length : 0;
      const max = typeof option.max_length === 'number' ? option.max_length : 6000;
      if (length < Math.max(1, min)) return { ok: false, why: `must be at least ${Math.max(1, min)} characters` };
      if (length > max) return { ok: false, why: `must be at most ${max} characters` };
      return { ok: true, value: raw };
    }
    case OptionType.INTEGER:
    case OptionType.NUMBER: {
      const integer = type === OptionType.INTEGER;
      const pattern = integer ? /^-?\d{1,16}$/ : /^-?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?$/i;
      const value = Number(raw);
      if (!pattern.test(raw) || !Number.isFinite(value) || (integer && !Number.isSafeInteger(value))) return { ok: false, why: integer ? 'must be a whole number' : 'must be a number' };
      if (typeof option.min_value === 'number' && value < option.min_value) return { ok: false, why: `must be at least ${option.min_value}` };
      if (typeof option.max_value === 'number' && value > option.max_value) return { ok: false, why: `must be at most ${option.max_value}` };
      return { ok: true, value };
    }
    case OptionType.BOOLEAN: {
      const lower = raw.toLowerCase();
      if (lower === 'true' || lower === 'yes') return { ok: true, value: true };
      if (lower === 'false' || lower === 'no') return { ok: true, value: false };
      return { ok: false, why: 'must be true or false' };
    }
    case OptionType.USER:
    case OptionType.CHANNEL:
    case OptionType.ROLE:
    case OptionType.MENTIONABLE: {
      const id = idOf(raw);
      const what = { [OptionType.USER]: 'a user', [OptionType.CHANNEL]: 'a channel', [OptionType.ROLE]: 'a role', [OptionType.MENTIONABLE]: 'a user or role' }[type];
      return id === undefined ? { ok: false, why: `must be ${what} (a mention or an id)` } : { ok: true, value: id };
    }
    default:
      return { ok: false, why: 'has a type that cannot be typed in the composer' };
  }
}

/** What each kind of target option is called in the composer's refusals. */
const TARGET_KINDS: Record<number, { field: 'users' | 'channels' | 'roles' | 'mentionables'; what: string }> = {
  [OptionType.USER]: { field: 'users', what: 'user' },
  [OptionType.CHANNEL]: { field: 'channels', what: 'channel of this server' },
  [OptionType.ROLE]: { field: 'roles', what: 'role of this server' },
  [OptionType.MENTIONABLE]: { field: 'mentionables', what: 'user or role of this server' },
};

/** The ids a command's user, channel, role and mentionable options name, by kind (Discord's `data.resolved` is made of them). */
export function optionTargets(options: readonly TypedOption[]): { users: string[]; channels: string[]; roles: string[]; mentionables: string[] } {
  const targets = { users: [] as string[], channels: [] as string[], roles: [] as string[], mentionables: [] as string[] };
  for (const option of options) {
    const kind = TARGET_KINDS[option.type];
    if (kind && typeof option.value === 'string' && !targets[kind.field].includes(option.value)) targets[kind.field].push(option.value);
  }
  return targets;
}

/** The composer's refusal of the option of kind `missing.kind` naming `missing.id`, which names nothing of that kind here. */
export function targetMissing(commandName: string, options: readonly TypedOption[], missing: { kind: 'users' | 'channels' | 'roles' | 'mentionables'; id: string }): string {
  const option = options.find((o) => o.value === missing.id && TARGET_KINDS[o.type]?.field === missing.kind);
  const what = Object.values(TARGET_KINDS).find((k) => k.field === missing.kind)?.what ?? 'user';
  return `The option ${option?.name ?? ''} of /${commandName} names no ${what} here.`;
}

/**
 * Types the `name:value` pairs by the command's options (Discord's option types: string, integer,
 * boolean, user, channel, role, mentionable, number), in the command's order. Refused, with a
 * sentence for the composer: a pair that is not `name:value`, an unknown or repeated option, a
 * value of the wrong type or outside the option's limits or choices, a missing required option.
 * Sub-commands are not typed here.
 */
export function typeOptions(commandName: string, declared: readonly Record<string, unknown>[], rest: string): OptionsResult {
  if (declared.some((o) => o.type === 1 || o.type === 2)) return { ok: false, message: `/${commandName} has sub-commands, which cannot be typed in the composer.` };
  const pairs = splitPairs(rest);
  if (!pairs) return { ok: false, message: `Write the options of /${commandName} as name:value (quote a value with spaces: name:"two words").` };
  const given = new Map<string, string>();
  for (const [name, value] of pairs) {
    if (!declared.some((o) => o.name === name)) {
      const known = declared.map((o) => String(o.name)).join(', ');
      return { ok: false, message: `/${commandName} has no option "${name}"${known ? ` (its options: ${known})` : ''}.` };
    }
    if (given.has(name)) return { ok: false, message: `The option ${name} of /${commandName} is given twice.` };
    given.set(name, value);
  }
  const options: TypedOption[] = [];
  for (const option of declared) {
    const name = String(option.name);
    const raw = given.get(name);
    if (raw === undefined) {
      if (option.required === true) return { ok: false, message: `/${commandName} needs the option ${name}.` };
      continue;
    }
    const result = typed(option, raw);
    if (!result.ok) return { ok: false, message: `The option ${name} of /${commandName} ${result.why}.` };
    const choices = Array.isArray(option.choices) ? (option.choices as Array<{ name?: unknown; value?: unknown }>) : [];
    if (choices.length > 0) {
      const chosen = choices.find((c) => c.value === result.value || c.name === raw);
      if (!chosen) return { ok: false, message: `The option ${name} of /${commandName} must be one of: ${choices.map((c) => String(c.name)).join(', ')}.` };
      options.push({ name, type: Number(option.type), value: chosen.value as string | number | boolean });
      continue;
    }
    options.push({ name, type: Number(option.type), value: result.value });
  }
  return { ok: true, options };
}

/** What an app answered, once checked. */
export type CheckedAnswer =
  | { kind: 'message'; content: string; embeds: Embed[]; ephemeral: boolean }
  | { kind: 'deferred'; ephemeral: boolean }
  | { kind: 'invalid'; reason: string };

/** The first problem of a 50035 tree as `path: message`, for the delivery log. */
function firstFieldError(tree: ErrorTree | undefined, path: string[] = []): string | undefined {
  if (tree === undefined) return undefined;
  for (const [key, node] of Object.entries(tree)) {
    if (Array.isArray(node)) return `${['data', ...path].join('.')}: ${node[0]?.message ?? 'invalid'}`;
    const found = firstFieldError(node, [...path, key]);
    if (found !== undefined) return found;
  }
  return undefined;
}

/**
 * Checks an app's answer to an APPLICATION_COMMAND (Discord's interaction response), the same
 * whether it came in the response body or by the callback route: a 2xx with a JSON object whose
 * `type` is 4 or 5 (deferred), `data.flags` 64 for ephemeral. Type 4's `data` is a message under
 * the follow-ups' rules (message-payload.ts: content ≤ 2000 code points, embeds, Discord's ignored
 * keys such as `allowed_mentions`, at least content or an embed). Mentions never notify anyone
 * (SPEC §2.10), so `allowed_mentions` is accepted and has nothing to allow. Anything else is
 * invalid, with the reason the app's owner reads in the delivery log.
 */
export function checkAnswer(status: number, body: Buffer, serviceName: string): CheckedAnswer {
  if (status < 200 || status >= 300) return { kind: 'invalid', reason: `it answered ${status}, not 200` };
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return { kind: 'invalid', reason: 'its answer is not JSON' };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return { kind: 'invalid', reason: 'its answer is not a JSON object' };
  const answer = parsed as { type?: unknown; data?: unknown };
  if (answer.data !== undefined && answer.data !== null && (typeof answer.data !== 'object' || Array.isArray(answer.data))) return { kind: 'invalid', reason: 'its data is not a JSON object' };
  const data = (answer.data ?? {}) as { content?: unknown; flags?: unknown };
  if (data.flags !== undefined && (typeof data.flags !== 'number' || !Number.isSafeInteger(data.flags) || data.flags < 0)) return { kind: 'invalid', reason: 'its data.flags is not a whole number' };
  const ephemeral = typeof data.flags === 'number' && (data.flags & EPHEMERAL) !== 0;
  if (answer.type === CallbackType.DEFERRED_CHANNEL_MESSAGE_WITH_SOURCE) return { kind: 'deferred', ephemeral };
  if (answer.type !== CallbackType.CHANNEL_MESSAGE_WITH_SOURCE) return { kind: 'invalid', reason: `its answer has type ${JSON.stringify(answer.type)}, not 4 or 5` };
  if (typeof data.content === 'string' && codePoints(data.content) > CONTENT_MAX) return { kind: 'invalid', reason: `its data.content is longer than ${CONTENT_MAX} characters` };
  const message = parseMessagePayload(data, { identityOverride: false, serviceName });
  if (!message.ok) {
    const problem = message.error.code === 50006 ? 'its answer of type 4 has neither data.content nor data.embeds' : `its data is invalid (${firstFieldError(message.error.errors) ?? message.error.message})`;
    return { kind: 'invalid', reason: problem };
  }
  return { kind: 'message', content: message.value.content ?? '', embeds: message.value.embeds ?? [], ephemeral };
}

/** Discord's interaction contexts (`context`): where the command was invoked. */
export const InteractionContext = { GUILD: 0, BOT_DM: 1 } as const;
/** Discord's integration types, the keys of `authorizing_integration_owners`. */
export const IntegrationType = { GUILD_INSTALL: 0, USER_INSTALL: 1 } as const;

/** One option of a command as the composer's `/` list shows it. */
export interface ComposerOption {
  name: string;
  description: string;
  required: boolean;
  /** What to write, in words ("a whole number", "true or false", …). */
  kind: string;
  /** The names of the option's choices, when it has some. */
  choices?: string[];
}

/** A command reachable in a channel, as the composer's `/` list shows it (issue #40 §2). */
export interface ComposerCommand {
  name: string;
  description: string;
  /** The app the command belongs to. */
  app: string;
  options: ComposerOption[];
}

const OPTION_KINDS: Record<number, string> = {
  [OptionType.STRING]: 'text',
  [OptionType.INTEGER]: 'a whole number',
  [OptionType.BOOLEAN]: 'true or false',
  [OptionType.USER]: 'a user',
  [OptionType.CHANNEL]: 'a channel',
  [OptionType.ROLE]: 'a role',
  [OptionType.MENTIONABLE]: 'a user or role',
  [OptionType.NUMBER]: 'a number',
};

/**
 * The commands the composer lists: one per name (the first app's, which is the one a typed
 * `/name` runs: reachableCommand takes installs in the same order), without commands that have
 * sub-commands, which cannot be typed (typeOptions), ordered by name.
 */
export function composerCommands(apps: ReadonlyArray<{ appName: string; commands: ReadonlyArray<{ name: string; description: string; options: readonly Record<string, unknown>[] }> }>): ComposerCommand[] {
  const byName = new Map<string, ComposerCommand>();
  for (const app of apps) {
    for (const command of app.commands) {
      if (byName.has(command.name) || command.options.some((o) => o.type === 1 || o.type === 2)) continue;
      byName.set(command.name, {
        name: command.name,
        description: command.description,
        app: app.appName,
        options: command.options.map((o) => {
          const choices = Array.isArray(o.choices) ? (o.choices as Array<{ name?: unknown }>).map((c) => String(c.name)) : [];
          return {
            name: String(o.name),
            description: typeof o.description === 'string' ? o.description : '',
            required: o.required === true,
            kind: OPTION_KINDS[Number(o.type)] ?? 'a value',
            ...(choices.length > 0 ? { choices } : {}),
          };
        }),
      });
    }
  }
  return [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
