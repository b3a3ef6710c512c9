import { escapeHtml } from '../../web/html.js';

/**
 * Pure mail building (issue #38 §1): every message is plain text plus simple HTML, names the
 * service (GATEHOUSE_SERVICE_NAME), says why it was sent, and links absolutely on
 * GATEHOUSE_BASE_URL.
 */
export interface MailContent {
  text: string;
  html: string;
}

export interface MailComposition {
  serviceName: string;
  baseUrl: string;
  /**
   * Why the person gets this mail, a clause that ends the footer's "You get this mail from
   * <service> (<base URL>) because …" ("someone asked to reset the password of @ada.").
   */
  why: string;
  /** Paragraphs of the body, plain text (escaped in the HTML part). */
  lines: readonly string[];
  /** The one action of the mail; `url` is a path on the base URL ("/reset-password?token=…") or absolute. */
  link?: { text: string; url: string };
}

/** A path becomes absolute on the base URL (which has no trailing slash, config.ts); an absolute URL stays. */
export function absoluteUrl(baseUrl: string, url: string): string {
  if (/^https?:\/\//i.test(url)) return url;
  return `${baseUrl}${url.startsWith('/') ? '' : '/'}${url}`;
}

export function composeMail(composition: MailComposition): MailContent {
  const { serviceName, why, lines } = composition;
  const link = composition.link && { text: composition.link.text, url: absoluteUrl(composition.baseUrl, composition.link.url) };
  const footer = `You get this mail from ${serviceName} (${composition.baseUrl}) because ${why}`;
  const ignore = 'If you did not expect it, you can ignore it.';

  const textParts = [...lines];
  if (link) textParts.push(`${link.text}:\n${link.url}`);
  textParts.push(`-- \n${footer}\n${ignore}`);
  const text = `${textParts.join('\n\n')}\n`;

  const paragraphs = lines.map((line) => `<p>${escapeHtml(line).replace(/\r?\n/g, '<br>')}</p>`);
  if (link) {
    const href = escapeHtml(link.url);
    paragraphs.push(`<p><a href="${href}">${escapeHtml(link.text)}</a></p>`, `<p style="font-size:0.9em">Or open this address: ${href}</p>`);
  }
  const html = [
    '<!doctype html>',
    `<html><head><meta charset="utf-8"><title>${escapeHtml(serviceName)}</title></head>`,
    '<body style="font-family:sans-serif;line-height:1.5;max-width:40em">',
    `<p><strong>${escapeHtml(serviceName)}</strong></p>`,
    ...paragraphs,
    `<hr><p style="font-size:0.9em;color:#555">${escapeHtml(footer)}<br>${escapeHtml(ignore)}</p>`,
    '</body></html>',
    '',
  ].join('\n');
  return { text, html };
}

/** The links of a mail's text part, for the `log:` transport. */
export function linksOf(text: string): string[] {
  // A sentence's closing punctuation is not part of the link.
  return (text.match(/https?:\/\/[^\s<>"]+/g) ?? []).map((link) => link.replace(/[).,;:!?]+$/, ''));
}

/** GATEHOUSE_SMTP_URL as it may be shown: the password (and any query) replaced. */
export function redactSmtpUrl(smtpUrl: string): string {
  try {
    const url = new URL(smtpUrl);
    if (url.password) url.password = '***';
    url.search = '';
    return url.toString();
  } catch {
    return `${/^([A-Za-z][A-Za-z0-9+.-]*):/.exec(smtpUrl)?.[1] ?? 'unparsable'}:…`;
  }
}

/** Issue #38 §1: after a failure the wait doubles from 30 s, capped at an hour. */
export const MAIL_RETRY_BASE_MS = 30_000;
export const MAIL_RETRY_CAP_MS = 60 * 60_000;
/** A mail still failing after this many attempts (about 3 hours of retries) is marked failed. */
export const MAIL_MAX_ATTEMPTS = 10;

/** The wait before attempt `attempts + 1`, after `attempts` failed ones. */
export function retryDelayMs(attempts: number): number {
  return Math.min(MAIL_RETRY_CAP_MS, MAIL_RETRY_BASE_MS * 2 ** Math.max(0, attempts - 1));
}
