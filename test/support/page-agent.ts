import type { LightMyRequestResponse } from 'fastify';
import type { App } from '../../src/http/app-type.js';

/**
 * A browser-like client over app.inject(): keeps cookies, and fills in the CSRF token of the
 * form on a page, as a person's browser would.
 */
export class PageAgent {
  readonly cookies = new Map<string, string>();

  constructor(private readonly app: App) {}

  private cookieHeader(): string | undefined {
    if (this.cookies.size === 0) return undefined;
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  private remember(response: LightMyRequestResponse): void {
    for (const c of response.cookies) {
      const expired = c.maxAge === 0 || (c.expires instanceof Date && c.expires.getTime() < Date.now()) || c.value === '';
      if (expired) this.cookies.delete(c.name);
      else this.cookies.set(c.name, c.value);
    }
  }

  async get(url: string, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
    const cookie = this.cookieHeader();
    const response = await this.app.inject({ method: 'GET', url, headers: { ...(cookie ? { cookie } : {}), ...headers } });
    this.remember(response);
    return response;
  }

  /** POSTs a form as-is (no CSRF token added): for testing refusals. */
  async postRaw(url: string, fields: Record<string, string | string[]>, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
    const cookie = this.cookieHeader();
    const body = new URLSearchParams();
    for (const [k, v] of Object.entries(fields)) for (const item of Array.isArray(v) ? v : [v]) body.append(k, item);
    const response = await this.app.inject({
      method: 'POST',
      url,
      payload: body.toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...(cookie ? { cookie } : {}), ...headers },
    });
    this.remember(response);
    return response;
  }

  /** Loads `pageUrl`, takes the CSRF token from its form, and posts `fields` to `action`. */
  async submit(pageUrl: string, action: string, fields: Record<string, string | string[]>): Promise<LightMyRequestResponse> {
    const page = await this.get(pageUrl);
    const token = csrfTokenIn(page.body);
    if (!token) throw new Error(`no CSRF token on ${pageUrl} (status ${page.statusCode})`);
    return this.postRaw(action, { ...fields, _csrf: token });
  }

  /**
   * `submit`, then the GET its 303 leads to (post/redirect/get, issue #24): the page a person
   * sees after a create form, where a one-time secret is shown. Throws unless the form redirected.
   */
  async submitAndFollow(pageUrl: string, action: string, fields: Record<string, string | string[]>): Promise<LightMyRequestResponse & { location: string }> {
    const posted = await this.submit(pageUrl, action, fields);
    if (posted.statusCode !== 303) throw new Error(`expected 303 from ${action}, got ${posted.statusCode}: ${posted.body.slice(0, 300)}`);
    const location = String(posted.headers.location);
    return Object.assign(await this.get(location), { location });
  }
}

export function csrfTokenIn(markup: string): string | undefined {
  return /name="_csrf" value="([^"]+)"/.exec(markup)?.[1];
}
