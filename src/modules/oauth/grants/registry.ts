import { CLIENT_AUTH_PARAMETERS } from '../client-auth.js';
import { authorizationCodeGrant } from './authorization-code.js';
import type { GrantType } from './grant.js';
import { clientCredentialsGrant } from './client-credentials.js';
import { DEVICE_CODE_GRANT_TYPE, deviceCodeGrant } from './device-code.js';
import { refreshTokenGrant } from './refresh-token.js';
import { TOKEN_EXCHANGE_GRANT_TYPE, tokenExchangeGrant } from './token-exchange.js';

/**
 * The token endpoint's grant types (issue #37 §3): the one list that the endpoint dispatches on
 * (token.service.ts), and that grant_types_supported (RFC 8414, OpenID Connect Discovery), the
 * endpoint's accepted parameters and the API reference's grant_type enum are made from
 * (test/http/grant-registry.test.ts). Adding a grant is its file in grants/ and its line here.
 * Anything not listed (password, implicit: OAUTH-CHECKLIST I3) answers
 * unsupported_grant_type.
 */
const GRANTS: ReadonlyMap<string, GrantType> = new Map<string, GrantType>([
  ['authorization_code', authorizationCodeGrant],
  ['refresh_token', refreshTokenGrant],
  ['client_credentials', clientCredentialsGrant],
  [DEVICE_CODE_GRANT_TYPE, deviceCodeGrant],
  [TOKEN_EXCHANGE_GRANT_TYPE, tokenExchangeGrant],
]);

/** grant_types_supported, in registration order. */
export const GRANT_TYPES: readonly string[] = [...GRANTS.keys()];

/** The grant registered under `grantType`; a Map, so no inherited name (`constructor`) is one. */
export function grantFor(grantType: string): GrantType | undefined {
  return GRANTS.get(grantType);
}

/** `a`, `a or b`, `a, b or c`: how the endpoint's answers and the API reference list the grant types. */
export function grantTypeList(quote = ''): string {
  const names = GRANT_TYPES.map((name) => `${quote}${name}${quote}`);
  return names.length <= 1 ? names.join('') : `${names.slice(0, -1).join(', ')} or ${names[names.length - 1]}`;
}

/** A token request parameter and what the API reference says of it. */
export interface TokenParameter {
  name: string;
  description: string;
}

/**
 * Every parameter the token endpoint reads (RFC 6749 §3.2: each refused when repeated): grant_type,
 * the client's credentials and each grant's own; a parameter two grants read is described for
 * both. The order is the order repeated parameters are checked in, and so which one an error
 * names: grant_type, the first grant's, the client's, then the other grants' (RFC 6749 §4.1.3
 * lists client_id with the code grant's).
 */
export const TOKEN_PARAMETER_DESCRIPTIONS: readonly TokenParameter[] = tokenParameters();

/** The names of TOKEN_PARAMETER_DESCRIPTIONS, for reading the form and the repeated-parameter check. */
export const TOKEN_PARAMETERS: readonly string[] = TOKEN_PARAMETER_DESCRIPTIONS.map((p) => p.name);

function tokenParameters(): TokenParameter[] {
  const described = new Map<string, string[]>([['grant_type', [grantTypeList('`')]]]);
  const add = (name: string, description: string) => {
    const seen = described.get(name);
    if (seen) seen.push(description);
    else described.set(name, [description]);
  };
  const [first, ...others] = GRANT_TYPES;
  const grantParameters = (type: string) => {
    for (const [name, description] of Object.entries((GRANTS.get(type) as GrantType).parameters)) add(name, `${type}: ${description}`);
  };
  if (first !== undefined) grantParameters(first);
  for (const [name, description] of Object.entries(CLIENT_AUTH_PARAMETERS)) add(name, description);
  for (const type of others) grantParameters(type);
  return [...described].map(([name, descriptions]) => ({ name, description: descriptions.join('; ') }));
}
