import { APP_A11Y_JS, APP_CSS } from './assets.js';
import { CSRF_FIELD } from './csrf.js';
import { html, type SafeHtml } from './html.js';

/** Who is looking at a page, as pages need it; pages never query (DESIGN §2). */
export interface Viewer {
  id: string;
  username: string;
  name: string;
  avatarUrl: string | null;
  /** Issue #38 §2: the consent screen's `email` line says which address and whether it is verified. */
  email?: string | null;
  emailVerified?: boolean;
  /** Issue #39: an instance administrator; the top bar shows them the Admin link. */
  admin?: boolean;
}

export interface PageInput {
  title: string;
  serviceName: string;
  viewer?: Viewer | undefined;
  csrfToken: string;
  body: SafeHtml;
  /** 'narrow' for sign-in style single forms. */
  width?: 'narrow' | 'wide';
  /** Extra scripts by URL (same-origin only: CSP script-src 'self'). */
  scripts?: string[];
  /** Skip links after "Skip to main content" (e.g. the channel view's message box), as fragment hrefs. */
  skipLinks?: ReadonlyArray<{ href: string; label: string }>;
  /** The request's path: the top bar marks its section with aria-current="page" (issue #24). */
  path?: string | undefined;
  /**
   * The place the page belongs to (a channel's server): named in the header beside the site's
   * name on a phone, where the sidebar that names it is folded into the menu (issue #36 §5).
   */
  place?: { label: string; href: string } | undefined;
}

/** The top bar's sections and the paths that belong to each. */
const TOP_LINKS: ReadonlyArray<{ href: string; label: string; owns: (path: string) => boolean }> = [
  { href: '/', label: 'Home', owns: (p) => p === '/' || p.startsWith('/servers/') || p.startsWith('/channels/') || p.startsWith('/invite/') },
  { href: '/messages', label: 'Messages', owns: (p) => p === '/messages' || p.startsWith('/messages/') || p.startsWith('/dms/') },
  { href: '/developers/applications', label: 'Developers', owns: (p) => p.startsWith('/developers') },
  { href: '/settings/profile', label: 'Settings', owns: (p) => p.startsWith('/settings/') },
];

/** Issue #39: the admin pages' section, in the top bar of administrators only. */
const ADMIN_LINK = { href: '/admin', label: 'Admin', owns: (p: string) => p === '/admin' || p.startsWith('/admin/') };

function topLinks(path: string | undefined, admin: boolean): SafeHtml {
  const links = admin ? [...TOP_LINKS, ADMIN_LINK] : TOP_LINKS;
  return html`${links.map((l) => html`<a href="${l.href}"${path !== undefined && l.owns(path) ? html` aria-current="page"` : ''}>${l.label}</a>`)}`;
}

/** Hidden CSRF field for every state-changing form. */
export function csrfField(token: string): SafeHtml {
  return html`<input type="hidden" name="${CSRF_FIELD}" value="${token}">`;
}

/**
 * The site's page shell. The header holds one row on a phone: the main links fold into a menu
 * (a <details>, so it opens without JavaScript), and opening it also shows the page's own
 * sidebar (a channel list, a settings menu: `.layout > .sidebar`, app.css) as the drawer. Skip
 * links come first in the reading order (WCAG 2.4.1); a11y.js moves focus to a refused form's
 * error message.
 */
export function layout(page: PageInput): string {
  const viewer = page.viewer;
  const links = viewer
    ? html`${topLinks(page.path, viewer.admin === true)}
        <span class="muted small">Signed in as <strong>${viewer.name}</strong> (@${viewer.username})</span>
        <form method="post" action="/logout">${csrfField(page.csrfToken)}<button class="link" type="submit">Sign out</button></form>`
    : html`<a href="/login">Sign in</a><a href="/register">Create account</a>`;
  const skips = [{ href: '#main', label: 'Skip to main content' }, ...(page.skipLinks ?? [])];
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${page.title} · ${page.serviceName}</title>
<link rel="stylesheet" href="${APP_CSS.path}">
<script src="${APP_A11Y_JS.path}" defer></script>
${(page.scripts ?? []).map((src) => html`<script src="${src}" defer></script>`)}
</head>
<body>
<div class="skip-links">${skips.map((l) => html`<a class="skip-link" href="${l.href}">${l.label}</a>`)}</div>
<header class="top"><a class="brand" href="/">${page.serviceName}</a>${page.place ? html`<a class="place" href="${page.place.href}">${page.place.label}</a>` : ''}
<details class="nav-menu"><summary aria-label="Menu"><span class="nav-menu-icon" aria-hidden="true"></span></summary><nav aria-label="Main">${links}</nav></details>
</header>
<main id="main" tabindex="-1" class="${page.width === 'narrow' ? 'narrow' : ''}">
${page.body}
</main>
</body>
</html>`.value;
}

/** A standalone error page (unknown client, bad redirect_uri, 404, 403 …). */
export function errorPage(input: { status: number; title: string; detail: string; serviceName: string; viewer?: Viewer | undefined; csrfToken: string }): string {
  return layout({
    title: input.title,
    serviceName: input.serviceName,
    viewer: input.viewer,
    csrfToken: input.csrfToken,
    width: 'narrow',
    body: html`<div class="card"><h1>${input.title}</h1><p>${input.detail}</p><p class="muted small">Error ${input.status}</p><p><a href="/">Go to the home page</a></p></div>`,
  });
}
