import { describe, expect, it } from 'vitest';
import { impersonationProblem, nameReadings, nameSkeleton, passesForService, RESERVED_NAMES } from '../../src/core/impersonation.js';

const SERVICE = 'Gatehouse';

describe('the impersonation rule (SPEC §2.9, §7): names that pass for the service are refused', () => {
  it('refuses the service name in any letter case, alone or inside a longer name', () => {
    for (const name of ['Gatehouse', 'gatehouse', 'GATEHOUSE', 'gAtEhOuSe', 'Gatehouse Bot', 'Official gatehouse team', 'MyGatehouseAlerts']) {
      expect(passesForService(name, SERVICE), name).toBe(true);
    }
  });

  it('refuses it spelled with spaces or punctuation between the letters', () => {
    for (const name of ['Gate house', 'G a t e h o u s e', 'Gate-House', 'G.A.T.E.H.O.U.S.E', 'gate_house!', 'Gate🏠house']) {
      expect(passesForService(name, SERVICE), name).toBe(true);
    }
  });

  it('refuses Cyrillic and Greek look-alike letters (homoglyphs)', () => {
    const cases = [
      'G\u0430t\u0435h\u043eus\u0435', // Cyrillic а, е, о
      'Gateh\u03bfuse', // Greek omicron ο
      'G\u0391\u03a4\u0395\u0397\u039fUS\u0395', // Greek capitals Α Τ Ε Η Ο Ε
      '\u0262\u1d00\u1d1b\u1d07\u029c\u1d0f\u1d1cs\u1d07', // small capitals ɢᴀᴛᴇʜᴏᴜsᴇ
    ];
    for (const name of cases) expect(passesForService(name, SERVICE), name).toBe(true);
  });

  it('refuses names hiding zero-width characters between the letters', () => {
    for (const zw of ['\u200b', '\u200c', '\u200d', '\u2060', '\ufeff', '\u00ad']) {
      const name = `Gate${zw}house`;
      expect(passesForService(name, SERVICE), JSON.stringify(name)).toBe(true);
    }
  });

  it('refuses fullwidth and mathematical letters (NFKC)', () => {
    expect(passesForService('\uff27\uff41\uff54\uff45\uff48\uff4f\uff55\uff53\uff45', SERVICE)).toBe(true); // Ｇａｔｅｈｏｕｓｅ
    expect(passesForService('\u{1d406}\u{1d41a}\u{1d42d}\u{1d41e}\u{1d421}\u{1d428}\u{1d42e}\u{1d42c}\u{1d41e}', SERVICE)).toBe(true); // 𝐆𝐚𝐭𝐞𝐡𝐨𝐮𝐬𝐞
  });

  it('refuses letters carrying combining marks', () => {
    expect(passesForService('G\u0301a\u0308te\u0300ho\u0303use', SERVICE)).toBe(true);
    expect(passesForService('Gätéhöüsé', SERVICE)).toBe(true);
  });

  it('refuses digits and symbols standing in for letters', () => {
    for (const name of ['G4t3h0us3', 'Gateh0use', 'G@tehou$e', 'GATEH0USE', 'g473h0u53']) expect(passesForService(name, SERVICE), name).toBe(true);
  });

  it('refuses the reserved words as whole names, whatever their disguise', () => {
    for (const name of ['system', 'System', ' SYSTEM ', 'sy\u0455tem', 'syst3m', 'Every One', 'everyone', '@everyone', 'here', '@here', 'HERE', 'h\u0435re']) {
      expect(passesForService(name, SERVICE), name).toBe(true);
    }
    expect(RESERVED_NAMES).toEqual(['system', 'everyone', 'here']);
  });

  it('allows names that merely contain a reserved word, and ordinary names', () => {
    for (const name of ['Where bot', 'Ecosystem feed', 'Here and there', 'Everyone’s CI', 'System status', 'Deploy bot', 'GitHub', 'Gate', 'House of builds', 'Clyde', 'Zoë', 'Ünïcödé alerts', '日本語ボット']) {
      expect(passesForService(name, SERVICE), name).toBe(false);
    }
  });

  it('follows the configured service name, not a fixed one', () => {
    expect(passesForService('Acme Chat alerts', 'Acme Chat')).toBe(true);
    expect(passesForService('acmechat', 'Acme Chat')).toBe(true);
    expect(passesForService('Gatehouse', 'Acme Chat')).toBe(false);
  });

  it('says why a name is refused', () => {
    expect(impersonationProblem('Gatehouse Bot', SERVICE)).toBe('Names that pass for Gatehouse are not allowed');
    expect(impersonationProblem('system', SERVICE)).toBe('"system" is a reserved name');
    expect(impersonationProblem('Build bot', SERVICE)).toBeUndefined();
  });

  it('reduces names to one skeleton, so look-alikes compare equal', () => {
    expect(nameSkeleton('G\u0430te-H0use\u200b')).toBe(nameSkeleton('gatehouse'));
    expect(nameSkeleton('Straße')).toBe('strasse');
    expect(nameSkeleton('I1l|')).toBe('llll');
  });
});

describe('issue #36 §5: every digit that looks like a letter folds to it', () => {
  it('refuses the service name written with 6 or 9 for G, 8 for B, 2 for Z', () => {
    for (const name of ['6atehouse', '6ATEH0USE', '9atehouse', '6 a t e h o u s e bot']) expect(passesForService(name, SERVICE), name).toBe(true);
    expect(passesForService('8ob alerts', 'Bob')).toBe(true);
    expect(passesForService('6o6 alerts', 'Bob')).toBe(true);
    expect(passesForService('2oe', 'Zoe')).toBe(true);
    expect(passesForService('9uill', 'Quill')).toBe(true);
  });

  it('reads 6 as G or b and 9 as g or q; the skeleton is the first reading', () => {
    expect(nameReadings('6o9')).toEqual(['gog', 'goq', 'bog', 'boq']);
    expect(nameSkeleton('6atehouse')).toBe(nameSkeleton('Gatehouse'));
    expect(nameSkeleton('28')).toBe('zb');
  });

  it('still allows names whose digits spell nothing of the service', () => {
    for (const name of ['Build 69', 'CI 2.8', 'Deploy bot 2026', 'Team 6']) expect(passesForService(name, SERVICE), name).toBe(false);
  });
});
