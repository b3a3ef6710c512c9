import { describe, expect, it } from 'vitest';
import { isValidPkceValue, s256Challenge, verifyPkce } from '../../src/modules/oauth/pkce.js';

// RFC 7636 Appendix B.
const RFC_VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
const RFC_CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';

describe('PKCE (RFC 7636)', () => {
  it('S256 of the Appendix B verifier is the Appendix B challenge', () => {
    expect(s256Challenge(RFC_VERIFIER)).toBe(RFC_CHALLENGE);
  });

  it('the Appendix B verifier verifies against its challenge; any other verifier does not', () => {
    expect(verifyPkce(RFC_VERIFIER, RFC_CHALLENGE)).toBe(true);
    expect(verifyPkce(RFC_VERIFIER.replace('d', 'e'), RFC_CHALLENGE)).toBe(false);
    expect(verifyPkce(RFC_VERIFIER, RFC_CHALLENGE.slice(0, -1) + 'N')).toBe(false);
  });

  it('plain is not a method: the challenge itself presented as the verifier does not verify', () => {
    expect(verifyPkce(RFC_CHALLENGE, RFC_CHALLENGE)).toBe(false);
  });

  it('B5: values are 43 to 128 characters of [A-Za-z0-9-._~]', () => {
    expect(isValidPkceValue('a'.repeat(43))).toBe(true);
    expect(isValidPkceValue('a'.repeat(128))).toBe(true);
    expect(isValidPkceValue('a'.repeat(42))).toBe(false);
    expect(isValidPkceValue('a'.repeat(129))).toBe(false);
    expect(isValidPkceValue(`${'a'.repeat(40)}-._~`)).toBe(true);
    for (const bad of ['+', '/', '=', ' ', '%', 'é', '\n']) expect(isValidPkceValue(`${'a'.repeat(43)}${bad}`)).toBe(false);
    expect(isValidPkceValue('')).toBe(false);
  });

  it('a malformed verifier never verifies, even against its own transform', () => {
    const short = 'abc';
    expect(verifyPkce(short, s256Challenge(short))).toBe(false);
  });
});
