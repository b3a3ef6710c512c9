import { describe, expect, it } from 'vitest';
import { issueSecret } from '../../src/core/secrets.js';
import { cryptoRandom } from '../../src/core/random.js';
import { verifyClientSecret, type Application } from '../../src/modules/applications/applications.js';
import { isLoopbackRedirectUri, matchRedirectUri, validateRedirectUri } from '../../src/modules/applications/redirect-uris.js';

const REGISTERED = 'https://good.example.com/callback';

describe('matchRedirectUri: simple string comparison (OAUTH-CHECKLIST A4)', () => {
  it('the exact registered URI matches and is returned', () => {
    expect(matchRedirectUri(['https://other.example/cb', REGISTERED], REGISTERED)).toBe(REGISTERED);
  });

  it('a registered URI with a query matches only with that exact query', () => {
    const withQuery = 'https://good.example.com/callback?tenant=a';
    expect(matchRedirectUri([withQuery], withQuery)).toBe(withQuery);
    expect(matchRedirectUri([withQuery], 'https://good.example.com/callback?tenant=b')).toBeUndefined();
    expect(matchRedirectUri([withQuery], 'https://good.example.com/callback')).toBeUndefined();
    expect(matchRedirectUri([withQuery], 'https://good.example.com/callback?tenant=a&x=1')).toBeUndefined();
  });

  // Every variant OAUTH-CHECKLIST A4 names, each a different URI to a byte-for-byte comparison.
  const variants: [string, string][] = [
    ['a trailing slash added', 'https://good.example.com/callback/'],
    ['the host case changed', 'https://GOOD.example.com/callback'],
    ['the scheme case changed', 'HTTPS://good.example.com/callback'],
    ['the default port added', 'https://good.example.com:443/callback'],
    ['another port added', 'https://good.example.com:8443/callback'],
    ['an extra query ?x=1', 'https://good.example.com/callback?x=1'],
    ['an empty query', 'https://good.example.com/callback?'],
    ['a fragment', 'https://good.example.com/callback#x'],
    ['an empty fragment', 'https://good.example.com/callback#'],
    ['https replaced by http', 'http://good.example.com/callback'],
    ['%2F instead of /', 'https://good.example.com%2Fcallback'],
    ['an encoded path character', 'https://good.example.com/%63allback'],
    ['a ..;/ segment', 'https://good.example.com/callback/..;/evil'],
    ['a ../ segment that resolves back', 'https://good.example.com/x/../callback'],
    ['userinfo https://good@evil', 'https://good.example.com@evil.example/callback'],
    ['userinfo before the host', 'https://user@good.example.com/callback'],
    ['a double @', 'https://good.example.com@evil.example@good.example.com/callback'],
    ['the host as a prefix of another domain', 'https://good.example.com.evil/callback'],
    ['the host as a prefix, with the path kept', 'https://good.example.com.evil.example/callback'],
    ['a trailing dot on the host', 'https://good.example.com./callback'],
    ['a backslash', 'https://good.example.com\\@evil.example/callback'],
    ['surrounding spaces', ' https://good.example.com/callback '],
    ['a longer path', 'https://good.example.com/callback/more'],
    ['a shorter path', 'https://good.example.com/callbac'],
    ['the empty string', ''],
  ];
  for (const [what, requested] of variants) {
    it(`${what} does not match`, () => {
      expect(matchRedirectUri([REGISTERED], requested)).toBeUndefined();
    });
  }

  it('a trailing slash removed does not match a URI registered with one', () => {
    expect(matchRedirectUri(['https://good.example.com/callback/'], REGISTERED)).toBeUndefined();
    expect(matchRedirectUri(['https://good.example.com/'], 'https://good.example.com')).toBeUndefined();
  });

  it('no registered URIs: nothing matches', () => {
    expect(matchRedirectUri([], REGISTERED)).toBeUndefined();
  });

  it('an https URI on a loopback address gets no port exception', () => {
    expect(matchRedirectUri(['https://127.0.0.1/cb'], 'https://127.0.0.1:8443/cb')).toBeUndefined();
  });

  it('a private-use scheme URI matches only exactly', () => {
    expect(matchRedirectUri(['com.example.app:/callback'], 'com.example.app:/callback')).toBe('com.example.app:/callback');
    expect(matchRedirectUri(['com.example.app:/callback'], 'com.example.app://callback')).toBeUndefined();
    expect(matchRedirectUri(['com.example.app:/callback'], 'COM.example.app:/callback')).toBeUndefined();
  });
});

describe('matchRedirectUri: the loopback exception (RFC 8252 §7.3, OAUTH-CHECKLIST A5)', () => {
  it('http://127.0.0.1 registered without a port accepts any port at request time', () => {
    const registered = 'http://127.0.0.1/cb';
    expect(matchRedirectUri([registered], 'http://127.0.0.1:51234/cb')).toBe(registered);
    expect(matchRedirectUri([registered], 'http://127.0.0.1:1/cb')).toBe(registered);
    expect(matchRedirectUri([registered], 'http://127.0.0.1:65535/cb')).toBe(registered);
    expect(matchRedirectUri([registered], 'http://127.0.0.1/cb')).toBe(registered);
  });

  it('http://[::1] registered with a port accepts another port, or none', () => {
    const registered = 'http://[::1]:8080/cb';
    expect(matchRedirectUri([registered], 'http://[::1]:9999/cb')).toBe(registered);
    expect(matchRedirectUri([registered], 'http://[::1]/cb')).toBe(registered);
  });

  it('a loopback URI with a query: the query must still be identical', () => {
    const registered = 'http://127.0.0.1/cb?app=cli';
    expect(matchRedirectUri([registered], 'http://127.0.0.1:7000/cb?app=cli')).toBe(registered);
    expect(matchRedirectUri([registered], 'http://127.0.0.1:7000/cb?app=gui')).toBeUndefined();
    expect(matchRedirectUri([registered], 'http://127.0.0.1:7000/cb')).toBeUndefined();
  });

  it('a loopback URI without a path: an added slash is still a different URI', () => {
    expect(matchRedirectUri(['http://127.0.0.1'], 'http://127.0.0.1:5000')).toBe('http://127.0.0.1');
    expect(matchRedirectUri(['http://127.0.0.1'], 'http://127.0.0.1:5000/')).toBeUndefined();
  });

  const refused: [string, string, string][] = [
    ['the path differs', 'http://127.0.0.1/cb', 'http://127.0.0.1:5000/cb/'],
    ['the scheme differs', 'http://127.0.0.1/cb', 'https://127.0.0.1:5000/cb'],
    ['the scheme case differs', 'http://127.0.0.1/cb', 'HTTP://127.0.0.1:5000/cb'],
    ['127.0.0.1 becomes [::1]', 'http://127.0.0.1/cb', 'http://[::1]:5000/cb'],
    ['[::1] becomes 127.0.0.1', 'http://[::1]/cb', 'http://127.0.0.1:5000/cb'],
    ['another loopback address', 'http://127.0.0.1/cb', 'http://127.0.0.2:5000/cb'],
    ['a numeric spelling of 127.0.0.1', 'http://127.0.0.1/cb', 'http://2130706433:5000/cb'],
    ['127.0.0.1 as a prefix of a domain', 'http://127.0.0.1/cb', 'http://127.0.0.1.evil.example/cb'],
    ['userinfo after the address', 'http://127.0.0.1/cb', 'http://127.0.0.1@evil.example/cb'],
    ['userinfo after a port', 'http://127.0.0.1/cb', 'http://127.0.0.1:80@evil.example/cb'],
    ['an empty port', 'http://127.0.0.1/cb', 'http://127.0.0.1:/cb'],
    ['port 0', 'http://127.0.0.1/cb', 'http://127.0.0.1:0/cb'],
    ['a port above 65535', 'http://127.0.0.1/cb', 'http://127.0.0.1:65536/cb'],
    ['a port with letters', 'http://127.0.0.1/cb', 'http://127.0.0.1:80a/cb'],
    ['a fragment', 'http://127.0.0.1/cb', 'http://127.0.0.1:5000/cb#x'],
  ];
  for (const [what, registered, requested] of refused) {
    it(`${what}: no match`, () => {
      expect(matchRedirectUri([registered], requested)).toBeUndefined();
    });
  }

  it('localhost gets no exception: only the exact registered port matches', () => {
    const registered = 'http://localhost:3000/cb';
    expect(matchRedirectUri([registered], registered)).toBe(registered);
    expect(matchRedirectUri([registered], 'http://localhost:3001/cb')).toBeUndefined();
    expect(matchRedirectUri([registered], 'http://localhost/cb')).toBeUndefined();
  });

  it('isLoopbackRedirectUri recognises only the literal loopback forms', () => {
    expect(isLoopbackRedirectUri('http://127.0.0.1:8080/cb')).toBe(true);
    expect(isLoopbackRedirectUri('http://[::1]/cb')).toBe(true);
    expect(isLoopbackRedirectUri('http://localhost/cb')).toBe(false);
    expect(isLoopbackRedirectUri('http://127.0.0.1.nip.io/cb')).toBe(false);
    expect(isLoopbackRedirectUri('https://127.0.0.1/cb')).toBe(false);
  });
});

describe('validateRedirectUri: registration rules (OAUTH-CHECKLIST A6)', () => {
  const acceptedForBoth = [
    'https://good.example.com/callback',
    'https://good.example.com/callback?tenant=a',
    'https://good.example.com:8443/callback',
    'https://[2001:db8::1]/cb',
    'https://localhost/cb',
    'http://127.0.0.1/cb',
    'http://127.0.0.1:8080/cb',
    'http://[::1]/cb',
    'http://[::1]:3000/cb?x=1',
  ];
  for (const uri of acceptedForBoth) {
    it(`${uri} is accepted for confidential and public apps`, () => {
      expect(validateRedirectUri(uri, true)).toBeUndefined();
      expect(validateRedirectUri(uri, false)).toBeUndefined();
    });
  }

  it('a reverse-domain private-use scheme is accepted for a public app', () => {
    expect(validateRedirectUri('com.example.app:/callback', false)).toBeUndefined();
    expect(validateRedirectUri('com.example.app:/oauth2redirect/provider', false)).toBeUndefined();
    expect(validateRedirectUri('io.my-app.ios://callback', false)).toBeUndefined();
  });

  it('a private-use scheme is refused for a confidential app, saying why', () => {
    expect(validateRedirectUri('com.example.app:/callback', true)).toMatch(/only for public/);
  });

  const refused: [string, string, RegExp][] = [
    ['empty', '', /Enter/],
    ['relative', '/callback', /absolute/],
    ['scheme-relative', '//good.example.com/cb', /absolute/],
    ['without scheme', 'good.example.com/cb', /absolute/],
    ['with a fragment', 'https://good.example.com/cb#frag', /fragment/],
    ['with an empty fragment', 'https://good.example.com/cb#', /fragment/],
    ['with userinfo', 'https://good@evil.example/cb', /user name/],
    ['with user and password', 'https://user:pass@good.example.com/cb', /user name/],
    ['with an empty userinfo', 'https://@good.example.com/cb', /user name/],
    ['with a double @', 'https://good.example.com@evil.example@good.example.com/cb', /user name/],
    ['http on a public host', 'http://good.example.com/cb', /loopback/],
    ['http on localhost', 'http://localhost:3000/cb', /not localhost/],
    ['http on another loopback address', 'http://127.0.0.2/cb', /loopback/],
    ['http on a numeric spelling of 127.0.0.1', 'http://2130706433/cb', /loopback/],
    ['http on 127.0.0.1 as a domain prefix', 'http://127.0.0.1.evil.example/cb', /loopback/],
    ['http with userinfo after the address', 'http://127.0.0.1@evil.example/cb', /user name/],
    ['http with an out-of-range port', 'http://127.0.0.1:70000/cb', /not a valid|loopback/],
    ['an upper-case scheme', 'HTTPS://good.example.com/cb', /lower case/],
    ['https without //', 'https:good.example.com/cb', /needs a host/],
    ['https without a host', 'https:///cb', /needs a host|not a valid/],
    ['javascript:', 'javascript:alert(1)', /javascript: URIs can never/],
    ['JavaScript: in mixed case', 'JavaScript:alert(1)', /javascript: URIs can never/],
    ['data:', 'data:text/html,<script>alert(1)</script>', /data: URIs can never/],
    ['file:', 'file:///etc/passwd', /file: URIs can never/],
    ['vbscript:', 'vbscript:msgbox', /vbscript: URIs can never/],
    ['a scheme without a dot', 'myapp:/callback', /private-use scheme named after a domain/],
    ['ftp', 'ftp://good.example.com/cb', /private-use scheme named after a domain/],
    ['a private-use scheme with no path', 'com.example.app:', /Add a path/],
    ['a space inside', 'https://good.example.com/call back', /spaces/],
    ['a newline inside', 'https://good.example.com/call\nback', /control/],
    ['a tab inside', 'https://good.example.com/\tcb', /control/],
    ['a leading space', ' https://good.example.com/cb', /spaces/],
    ['non-ASCII characters', 'https://gööd.example.com/cb', /non-ASCII/],
    ['a backslash', 'https://good.example.com\\@evil.example/cb', /backslash/],
    ['longer than 2048 characters', `https://good.example.com/${'a'.repeat(2048)}`, /2048/],
  ];
  for (const [what, uri, message] of refused) {
    it(`refused: ${what}`, () => {
      expect(validateRedirectUri(uri, false)).toMatch(message);
      expect(validateRedirectUri(uri, true)).toMatch(message);
    });
  }

  it('exactly 2048 characters is still accepted', () => {
    const prefix = 'https://good.example.com/';
    const uri = prefix + 'a'.repeat(2048 - prefix.length);
    expect(uri).toHaveLength(2048);
    expect(validateRedirectUri(uri, true)).toBeUndefined();
  });
});

describe('verifyClientSecret', () => {
  const base: Application = {
    id: '1',
    ownerId: '2',
    name: 'App',
    description: '',
    iconUrl: null,
    confidential: true,
    clientSecretHash: null,
    redirectUris: [],
    botPublic: true,
    botRequireCodeGrant: false,
    botUserId: null,
    createdAt: 0,
    updatedAt: 0,
    disabledAt: null,
    disabledReason: null,
  };
  const secret = issueSecret(cryptoRandom, 'clientSecret');
  const app: Application = { ...base, clientSecretHash: secret.hash };

  it('the issued secret verifies', () => {
    expect(verifyClientSecret(app, secret.plain)).toBe(true);
  });

  it('another secret, a prefix, an extension, the hash itself or nothing does not verify', () => {
    expect(verifyClientSecret(app, issueSecret(cryptoRandom, 'clientSecret').plain)).toBe(false);
    expect(verifyClientSecret(app, secret.plain.slice(0, -1))).toBe(false);
    expect(verifyClientSecret(app, `${secret.plain}x`)).toBe(false);
    expect(verifyClientSecret(app, secret.hash)).toBe(false);
    expect(verifyClientSecret(app, '')).toBe(false);
  });

  it('a public app has no secret: nothing verifies, not even the empty string', () => {
    const publicApp: Application = { ...base, confidential: false, clientSecretHash: null };
    expect(verifyClientSecret(publicApp, '')).toBe(false);
    expect(verifyClientSecret(publicApp, 'anything')).toBe(false);
    // A stray hash on a public app is ignored: its type decides.
    expect(verifyClientSecret({ ...publicApp, clientSecretHash: secret.hash }, secret.plain)).toBe(false);
  });
});
