import { html, type SafeHtml } from '../../web/html.js';
import { settingsLayout, type PageCtx } from '../../web/components.js';
import { csrfField, layout, type Viewer } from '../../web/layout.js';
import type { SessionView } from './sessions.js';

/** "2026-11-28 00:12 UTC": to the minute, in UTC, as Settings → Security shows times. */
function when(ms: number): SafeHtml {
  const iso = new Date(ms).toISOString();
  return html`<time datetime="${iso}">${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC</time>`;
}

export interface SessionsPageInput {
  ctx: PageCtx & { viewer: Viewer };
  sessions: SessionView[];
  /** After "End" or "End all other sessions": how many ended. */
  ended?: number | undefined;
  /** A refused form (a session already ended, say), shown above the list. */
  problem?: string | undefined;
}

function sessionCard(ctx: PageCtx, s: SessionView): SafeHtml {
  const label = `${s.device}${s.current ? ' (this browser)' : ''}`;
  return html`<li class="card session${s.current ? ' current' : ''}">
<h2>${s.device}${s.current ? html` <span class="badge">This browser</span>` : ''}</h2>
<dl class="small">
<dt>Address</dt><dd>${s.address ?? 'Not recorded'}</dd>
<dt>Signed in</dt><dd>${when(s.signedInAt)}</dd>
<dt>Last used</dt><dd>${when(s.lastUsedAt)}</dd>
</dl>
${
  s.current
    ? html`<p class="muted small">Sign out to end this session.</p>`
    : html`<form method="post" action="/settings/sessions/end" class="actions">
${csrfField(ctx.csrfToken)}
<input type="hidden" name="session" value="${s.id}">
<button type="submit" class="danger" aria-label="End session: ${label}, signed in from ${s.address ?? 'an unrecorded address'}">End session</button>
</form>`
}
</li>`;
}

/** Settings → Sessions (issue #38 §5): each signed-in session; end one, or all others. */
export function sessionsPage(input: SessionsPageInput): string {
  const { ctx, sessions } = input;
  const others = sessions.filter((s) => !s.current).length;
  const content = html`<h1>Sessions</h1>
${input.ended !== undefined ? html`<div class="notice" role="status">${input.ended === 0 ? 'There were no other sessions to end.' : input.ended === 1 ? 'One session was ended.' : `${input.ended} sessions were ended.`} A browser whose session ended must sign in again.</div>` : ''}
${input.problem ? html`<div class="error" role="alert">${input.problem}</div>` : ''}
<p class="muted">Every browser signed in to your account. End a session you do not recognise, then change your password.</p>
<ul class="plain sessions">${sessions.map((s) => sessionCard(ctx, s))}</ul>
${
  others > 0
    ? html`<form method="post" action="/settings/sessions/end-others" class="actions">
${csrfField(ctx.csrfToken)}
<button type="submit" class="danger">End all other sessions (${others})</button>
</form>`
    : html`<p class="muted small">You are signed in nowhere else.</p>`
}`;
  return layout({ title: 'Sessions', serviceName: ctx.serviceName, viewer: ctx.viewer, csrfToken: ctx.csrfToken, path: ctx.path, body: settingsLayout('sessions', content) });
}
