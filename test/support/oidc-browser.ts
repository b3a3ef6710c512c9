import { createHash } from 'node:crypto';

/** OpenID Connect Core §3.1.3.6, computed independently of the server: left half of SHA-256, base64url. */
export function expectedAtHash(accessToken: string): string {
  return createHash('sha256').update(accessToken, 'ascii').digest().subarray(0, 16).toString('base64url');
}

/** The JWS with one character of its payload changed (the signature no longer matches). */
export function tamper(jws: string): string {
  const [header, payload, signature] = jws.split('.') as [string, string, string];
  const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
  claims['sub'] = `${String(claims['sub'])}1`;
  return `${header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${signature}`;
}

/** The decoded protected header of a JWS. */
export function jwsHeader(jws: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(jws.split('.')[0] as string, 'base64url').toString('utf8')) as Record<string, unknown>;
}
