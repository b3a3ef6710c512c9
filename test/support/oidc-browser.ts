import { createHash } from 'node:crypto';
import { csrfTokenIn } from './page-agent.js';

/**
 * The person's browser for the OpenID Connect end-to-end tests, over plain fetch: GET the
 * authorization URL with the session cookie, and when the consent screen comes, submit its form
 * (hidden fields and CSRF token scraped as a browser would send them). Returns the redirect's URL:
 * the app's callback, or /login when the request forces a sign-in.
 */
export async function browse(baseUrl: string, sessionCookie: string | undefined, authorizationUrl: URL): Promise<URL> {
  const headers: Record<string, string> = sessionCookie ? { cookie: sessionCookie } : {};
  const page = await fetch(authorizationUrl, { headers, redirect: 'manual' });
  const location = page.headers.get('location');
  if ((page.status === 302 || page.status === 303) && location) return new URL(location, baseUrl);
  const markup = await page.text();
  if (page.status !== 200) throw new Error(`authorization answered ${page.status}: ${markup.slice(0, 200)}`);
  const start = markup.indexOf('<form method="post" action="/app/oauth2/authorize">');
  const consentForm = start < 0 ? '' : markup.slice(start, markup.indexOf('</form>', start));
  if (!csrfTokenIn(consentForm)) throw new Error('no CSRF token in the consent form');
  const form = new URLSearchParams();
  for (const [, name, value] of consentForm.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) {
    form.append(name as string, (value as string).replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&'));
  }
  form.append('decision', 'authorize');
  const answer = await fetch(new URL('/app/oauth2/authorize', baseUrl), {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded', origin: new URL(baseUrl).origin },
    body: form,
    redirect: 'manual',
  });
  const next = answer.headers.get('location');
  if (answer.status !== 303 || !next) throw new Error(`consent form answered ${answer.status}`);
  return new URL(next, baseUrl);
}

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
