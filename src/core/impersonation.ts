import { remove as removeConfusables } from 'confusables';

/**
 * The impersonation rule for display names that readers see next to an APP badge: a webhook's
 * name, and the `username` override of one webhook message (SPEC §2.9, §7: "names that impersonate
 * the service are refused"). docs/webhooks.md states the rule for users.
 *
 * A name and the service's configured name (GATEHOUSE_SERVICE_NAME) are both reduced to a
 * "skeleton" and compared:
 *  1. Unicode NFKC (fullwidth Ｇ → G, mathematical 𝐆 → G, ligatures ﬁ → fi);
 *  2. invisible characters removed (zero-width space/joiners, word joiner, BOM, soft hyphen,
 *     bidi controls, variation selectors: every Default_Ignorable_Code_Point);
 *  3. canonical decomposition, then every combining mark (\p{M}) removed (é → e, G̸ → G);
 *  4. confusable characters folded to the Latin letter they imitate with the maintained table of
 *     the `confusables` package (Cyrillic а е о, Greek ο Α Τ, small capitals ᴀ, Cherokee Ꮪ…);
 *  5. full case folding (upper then lower case; ß and ẞ become ss);
 *  6. digit and symbol look-alikes folded: 0→o 1→l 2→z 3→e 4→a 5→s 7→t 8→b @→a $→s |→l, and
 *     i→l, rn→m, vv→w (a capital I, a lower-case l and a 1 look the same in many fonts). Two
 *     digits imitate two letters each, 6 (G or b) and 9 (g or q): a name is read every way
 *     (issue #36 §5: "6atehouse" passed), and its skeleton is the first reading (6→g, 9→g);
 *  7. everything that is not a letter or digit (spaces, punctuation, symbols) removed.
 *
 * A name is refused when one of its readings contains the service's skeleton anywhere ("Gatehouse Bot",
 * "g a t e h o u s e", "GΑΤΕΗΟUSΕ", "Gate-h0use", "6atehouse") or equals, as a whole, a reserved word
 * ("system", "everyone", "here", also written "@everyone"): these are what readers take for the platform's own voice or a
 * mass mention. Whole-word only, so "Where bot" and "Ecosystem feed" stay allowed. "clyde" is not
 * reserved: it is Discord's own assistant, not a name this service shows.
 */
export const RESERVED_NAMES: readonly string[] = ['system', 'everyone', 'here'];

// Default_Ignorable_Code_Point covers U+200B–U+200F, U+2060–U+206F, U+FEFF, U+00AD, U+034F,
// U+180E, variation selectors and tags; \p{Cf} adds the remaining format characters.
const INVISIBLE = /[\p{Default_Ignorable_Code_Point}\p{Cf}]/gu;
const MARKS = /\p{M}/gu;
const NOT_LETTER_OR_DIGIT = /[^\p{L}\p{N}]/gu;
const LOOKALIKES: Readonly<Record<string, string>> = { '0': 'o', '1': 'l', '2': 'z', '3': 'e', '4': 'a', '5': 's', '7': 't', '8': 'b', '@': 'a', $: 's', '|': 'l', i: 'l' };
const LOOKALIKE_CHARS = /[01234578@$|i]/g;
/** Digits that imitate two letters (step 6): every reading is compared; the first letter makes the skeleton. */
const AMBIGUOUS: ReadonlyArray<readonly [string, readonly [string, string]]> = [
  ['6', ['g', 'b']],
  ['9', ['g', 'q']],
];

/** The skeleton that two names are compared by (steps 1–7 above, the first reading). Exported for tests and docs. */
export function nameSkeleton(name: string): string {
  return nameReadings(name)[0] as string;
}

/** Every reading of a name's skeleton: each ambiguous digit read as each letter it imitates (at most four). */
export function nameReadings(name: string): string[] {
  let readings = [unambiguousSkeleton(name)];
  for (const [digit, letters] of AMBIGUOUS) {
    if (!(readings[0] as string).includes(digit)) continue;
    readings = readings.flatMap((r) => letters.map((letter) => r.replaceAll(digit, letter)));
  }
  return readings;
}

function unambiguousSkeleton(name: string): string {
  let s = name.normalize('NFKC').replace(INVISIBLE, '');
  s = s.normalize('NFD').replace(MARKS, '');
  // The table reads ß as a b; case folding would make it ss. The table goes before case folding
  // because capitals and small letters imitate different things (Greek Η is an H, η an n).
  s = removeConfusables(s.replace(/[ßẞ]/g, 'ss')).toUpperCase().toLowerCase();
  // Look-alikes before stripping punctuation, since @ $ | are punctuation.
  s = s.replace(LOOKALIKE_CHARS, (c) => LOOKALIKES[c] ?? c);
  s = s.replace(NOT_LETTER_OR_DIGIT, '');
  return s.replace(/rn/g, 'm').replace(/vv/g, 'w');
}

/** Why a name is refused, or undefined when it is fine. */
export function impersonationProblem(name: string, serviceName: string): string | undefined {
  const readings = nameReadings(name);
  const service = nameSkeleton(serviceName);
  if (service.length > 0 && readings.some((r) => r.includes(service))) return `Names that pass for ${serviceName} are not allowed`;
  // "@everyone" is the mention itself; @ otherwise folds to a, so it is dropped in front first.
  const bare = nameReadings(name.normalize('NFKC').replace(/^[\s@]+/u, ''));
  if ([...readings, ...bare].some((r) => RESERVED_NAMES.includes(r))) return `"${name.trim()}" is a reserved name`;
  return undefined;
}

/**
 * True when `name` passes for the service (contains its name after folding, or is a reserved word)
 * and must therefore be refused (SPEC §7).
 */
export function passesForService(name: string, serviceName: string): boolean {
  return impersonationProblem(name, serviceName) !== undefined;
}
