import { describe, expect, it } from 'vitest';
import { actorNameProblem, invisibleCharacter } from '../../src/core/names.js';

const SERVICE = 'Gatehouse';

describe('issue #21 §4: invisible and text-direction characters are refused in every display name', () => {
  it('refuses the Bidi_Control characters: U+202E + "ESUOHETAG" displays as GATEHOUSE', () => {
    for (const c of ['\u202e', '\u202d', '\u202a', '\u202b', '\u202c', '\u2066', '\u2067', '\u2068', '\u2069', '\u200e', '\u200f', '\u061c']) {
      expect(invisibleCharacter(`${c}ESUOHETAG`), c.codePointAt(0)?.toString(16)).toBe(c);
    }
    expect(actorNameProblem('\u202eESUOHETAG', SERVICE)).toEqual({ kind: 'invisible', message: 'Must not contain control or invisible characters.', character: '\u202e' });
  });

  it('refuses the other format characters (Cf), controls, separators and the invisible fillers', () => {
    const invisible = ['\u200b', '\u200c', '\u2060', '\ufeff', '\u00ad', '\u{e0041}', '\u0000', '\u0085', '\u2028', '\u2029', '\u034f', '\u180e', '\u3164', '\u115f', '\u1160', '\uffa0', '\u2800'];
    for (const c of invisible) expect(invisibleCharacter(`Deploy${c}Bot`), c.codePointAt(0)?.toString(16)).toBe(c);
    // A name made only of fillers looks empty but is not.
    expect(actorNameProblem('\u3164\u3164', SERVICE)?.kind).toBe('invisible');
  });

  it('allows names in any script and emoji drawn with their selectors and joiners', () => {
    for (const name of ['Zoë', 'محمد', 'שלום', '日本語ボット', 'Deploy 🚀', '❤️ fans', '👩‍💻 coders', '👍🏽 ok', 'Build-bot_2']) {
      expect(actorNameProblem(name, SERVICE), name).toBeUndefined();
    }
  });

  it('one rule for every actor name: look-alikes and reserved words are refused as impersonation', () => {
    expect(actorNameProblem('G\u0430t\u0435h\u043eus\u0435', SERVICE)).toEqual({ kind: 'impersonation', message: 'Names that pass for Gatehouse are not allowed' });
    expect(actorNameProblem('system', SERVICE)?.kind).toBe('impersonation');
  });
});
