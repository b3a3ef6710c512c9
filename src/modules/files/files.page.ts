import { html, type SafeHtml } from '../../web/html.js';
import type { FileView } from './attachments.js';

/**
 * Issue #42 §3: a message's files in the channel view. An image (PNG, JPEG, GIF or WebP, read
 * from its bytes) is shown inline with its width and height reserved, so nothing moves as it
 * loads, and its description as alt text; every other file is a download card with its name and
 * size. URLs are signed and relative to our origin (the page's CSP allows images from 'self').
 */

/** 1234567 → "1.2 MB": sizes as people read them (decimal units, as file managers show them). */
export function readableSize(bytes: number): string {
  if (bytes < 1000) return `${bytes} bytes`;
  const units = ['kB', 'MB', 'GB'];
  let value = bytes / 1000;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit += 1;
  }
  return `${value < 10 ? value.toFixed(1) : Math.round(value)} ${units[unit]}`;
}

/** Images wider than this are scaled down in the view, keeping their ratio. */
const MAX_WIDTH = 400;
const MAX_HEIGHT = 300;

function shownSize(width: number, height: number): { width: number; height: number } {
  const scale = Math.min(1, MAX_WIDTH / width, MAX_HEIGHT / height);
  return { width: Math.max(1, Math.round(width * scale)), height: Math.max(1, Math.round(height * scale)) };
}

function fileItem(f: FileView): SafeHtml {
  if (f.image) {
    const { width, height } = shownSize(f.image.width, f.image.height);
    return html`<li class="file-image"><a href="${f.url}" target="_blank" rel="noopener"><img src="${f.url}" alt="${f.description ?? f.filename}" width="${String(width)}" height="${String(height)}" loading="lazy" referrerpolicy="no-referrer"></a></li>`;
  }
  return html`<li class="file-card"><a href="${f.url}" download="${f.filename}"><span class="file-name">${f.filename}</span> <span class="small muted">${readableSize(f.size)}</span></a>${f.description ? html`<span class="visually-hidden"> ${f.description}</span>` : ''}</li>`;
}

export function filesBlock(files: readonly FileView[]): SafeHtml {
  if (files.length === 0) return html``;
  return html`<ul class="files" aria-label="Files">${files.map(fileItem)}</ul>`;
}
