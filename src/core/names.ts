import { impersonationProblem } from './impersonation.js';

/**
 * The one rule for names a person chose that others read (issue #21 §4), shared by every module:
 *
 *  1. `invisibleCharacter`: no name may hold a character that shows nothing yet changes what is
 *     shown. That is every control (General_Category Cc), every format character (Cf: the
 *     Bidi_Control set U+061C, U+200E/F, U+202A–U+202E, U+2066–U+2069 that reorder text — U+202E
 *     + "ESUOHETAG" displays as GATEHOUSE — zero-width spaces and joiners, word joiner, BOM, soft
 *     hyphen, tags…), the line and paragraph separators (Zl, Zp), every other
 *     Default_Ignorable_Code_Point (combining grapheme joiner, Mongolian selectors, the Hangul
 *     fillers U+115F, U+1160, U+3164, U+FFA0 that render as blank letters), and the blank Braille
 *     pattern U+2800, which fonts draw as nothing. Two emoji conventions stay allowed, since they
 *     only choose how a visible emoji is drawn: the variation selectors U+FE0E/U+FE0F, and a zero
 *     width joiner between two emoji (👩‍💻).
 *  2. `actorNameProblem`: a name shown as who is speaking or acting (webhook names and a message's
 *     username override, app and bot names, people's display names and usernames, server names
 *     where they speak) also must not pass for the service (impersonation.ts).
 *
 * Pure: no Fastify, no Kysely. docs/webhooks.md and docs/accounts.md state it for users.
 */

// Emoji presentation selectors, and ZWJ inside an emoji sequence (optionally after a selector or skin tone).
const EMOJI_GLUE = /(?<=\p{Extended_Pictographic}[\uFE0E\uFE0F\u{1F3FB}-\u{1F3FF}]?)\u200D(?=\p{Extended_Pictographic})|[\uFE0E\uFE0F]/gu;
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}\u2800]/u;

/** The first invisible character of `name` (rule 1 above), or undefined when it has none. */
export function invisibleCharacter(name: string): string | undefined {
  const match = INVISIBLE.exec(name.replace(EMOJI_GLUE, ''));
  return match ? match[0] : undefined;
}

/** Why a name with an invisible character is refused: the same sentence in every form and API. */
export const INVISIBLE_CHARACTER_MESSAGE = 'Must not contain control or invisible characters.';

/**
 * A refused actor name: which rule refused it (each field reports it under its own Discord error
 * code) and a sentence for people (without a final period, as impersonation.ts words it).
 */
export type NameProblem = { kind: 'invisible'; message: string; character: string } | { kind: 'impersonation'; message: string };

/**
 * Why a name shown as an actor is refused (rules 1 and 2), or undefined when it is fine. Length
 * and trimming stay with each field's own rule; this judges only what the name could pass for.
 */
export function actorNameProblem(name: string, serviceName: string): NameProblem | undefined {
  const character = invisibleCharacter(name);
  if (character !== undefined) return { kind: 'invisible', message: INVISIBLE_CHARACTER_MESSAGE, character };
  const problem = impersonationProblem(name, serviceName);
  if (problem !== undefined) return { kind: 'impersonation', message: problem };
  return undefined;
}
