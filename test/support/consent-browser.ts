import { startSession } from '../../src/modules/accounts/sessions.service.js';
import { cookieNames } from '../../src/web/pages.js';
import { personActingOf } from './acting.js';
import type { TestApp } from './app.js';
import { csrfTokenIn } from './page-agent.js';

/** The Cookie header of a fresh session of `personId`, as a signed-in browser sends it. */
export async function sessionCookie(t: TestApp, personId: string, label = 'e2e test'): Promise<string> {
  return `${cookieNames(false).session}=${(await startSession(t.services, personActingOf(personId), label)).token}`;
}

export interface BrowseOptions {
  /** Fields the person sets on the consent screen (e.g. webhook.incoming's `channel_id`). */
  choose?: Record<string, string>;
  /** Sees the consent form's markup before it is submitted (e.g. to check what a picker offers). */
  inspect?: (consentForm: string) => void;
}

/**
 * The person's browser over plain fetch, for the end-to-end tests of OAuth and OpenID Connect
 * clients: GET the authorization URL with the session cookie; when the consent screen comes,
 * submit its form (hidden fields and CSRF token scraped as a browser sends them, plus what the
 * person chose) with Authorize. Returns the redirect's URL: the app's callback, or /login when
 * the request forces a sign-in.
 */
export async function browse(baseUrl: string, cookie: string | undefined, authorizationUrl: URL, options: BrowseOptions = {}): Promise<URL> {
  const headers: Record<string, string> = cookie ? { cookie } : {};
  const page = await fetch(authorizationUrl, { headers, redirect: 'manual' });
  const location = page.headers.get('location');
  if ((page.status === 302 || page.status === 303) && location) return new URL(location, baseUrl);
  const markup = await page.text();
  if (page.status !== 200) throw new Error(`authorization answered ${page.status}: ${markup.slice(0, 200)}`);
  // The consent form only (the page has a sign-out form too), as a browser would submit it.
  const start = markup.indexOf('<form method="post" action="/app/oauth2/authorize">');
  const consentForm = start < 0 ? '' : markup.slice(start, markup.indexOf('</form>', start));
  if (!csrfTokenIn(consentForm)) throw new Error('no CSRF token in the consent form');
  options.inspect?.(consentForm);
  const form = new URLSearchParams();
  for (const [, name, value] of consentForm.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) {
    form.append(name as string, (value as string).replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&'));
  }
  for (const [name, value] of Object.entries(options.choose ?? {})) form.append(name, value);
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
