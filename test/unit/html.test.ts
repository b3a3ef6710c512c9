import { describe, expect, it } from 'vitest';
import { escapeHtml, html, raw } from '../../src/web/html.js';
import { csrfToken, verifyCsrfToken } from '../../src/web/csrf.js';

describe('html templates escape by default (DESIGN §4)', () => {
  it('escapes interpolated text, including quotes for attributes', () => {
    const name = `<script>alert("x")</script>' onmouseover='x`;
    const out = html`<p title="${name}">${name}</p>`.value;
    expect(out).not.toContain('<script>');
    expect(out).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#39; onmouseover=&#39;x');
  });

  it('nests templates and arrays without double-escaping', () => {
    const items = ['a&b', 'c'].map((x) => html`<li>${x}</li>`);
    expect(html`<ul>${items}</ul>`.value).toBe('<ul><li>a&amp;b</li><li>c</li></ul>');
  });

  it('renders nothing for null, undefined and booleans', () => {
    expect(html`${null}${undefined}${false}${true}|`.value).toBe('|');
  });

  it('raw() is the only way to pass markup through', () => {
    expect(html`${raw('<b>x</b>')}`.value).toBe('<b>x</b>');
    expect(escapeHtml('`')).toBe('&#96;');
  });
});

describe('CSRF tokens', () => {
  it('verify only against the key they were made for', () => {
    const token = csrfToken('session-a');
    expect(verifyCsrfToken('session-a', token)).toBe(true);
    expect(verifyCsrfToken('session-b', token)).toBe(false);
    expect(verifyCsrfToken('session-a', '')).toBe(false);
    expect(verifyCsrfToken('session-a', undefined)).toBe(false);
    expect(verifyCsrfToken(undefined, token)).toBe(false);
    expect(verifyCsrfToken('session-a', ['x'])).toBe(false);
  });
});
