import { html, type SafeHtml } from '../../web/html.js';
import { CSRF_FIELD } from '../../web/csrf.js';
import { UPLOADED_IMAGE_MAX_BYTES } from './uploaded-images.js';

export interface ImageUploadFormInput {
  /** Where the form posts (a multipart route of image-upload.routes.ts). */
  action: string;
  csrfToken: string;
  /** The current image's URL (uploaded or external), or null. */
  current: string | null;
  /** "Avatar" or "Icon". */
  label: string;
  /** Why the last upload was refused, shown beside the input. */
  error?: string | undefined;
  /** Prefixes the element ids, for a page with several of these forms (one per webhook). */
  idPrefix?: string | undefined;
}

/**
 * Issue #42 §3: uploading an avatar or icon from a page. A multipart form post, so it works
 * without script (a script could only turn the file into a data URI that a browser without it
 * cannot make); its CSRF token rides in the action URL, as the multipart body is read only after
 * the session's checks (page-context.hook.ts). app.js shows a preview of the chosen file.
 */
export function imageUploadForm(input: ImageUploadFormInput): SafeHtml {
  const action = `${input.action}${input.action.includes('?') ? '&' : '?'}${CSRF_FIELD}=${encodeURIComponent(input.csrfToken)}`;
  const id = (name: string) => `${input.idPrefix ?? ''}${name}`;
  const mib = UPLOADED_IMAGE_MAX_BYTES / 1024 / 1024;
  return html`<form method="post" action="${action}" enctype="multipart/form-data" class="image-upload" id="${id('image-upload')}">
<p><strong>${input.label} image</strong></p>
<div class="message">${input.current ? html`<img class="avatar" id="${id('image-current')}" src="${input.current}" alt="Current ${input.label.toLowerCase()}" width="64" height="64">` : html`<span class="muted" id="${id('image-current')}">No ${input.label.toLowerCase()} yet.</span>`}
<img class="avatar" id="${id('image-preview')}" alt="Preview of the chosen image" width="64" height="64" hidden></div>
<label for="${id('image-file')}">Choose a new ${input.label.toLowerCase()}</label>
<input id="${id('image-file')}" name="image" type="file" accept="image/png,image/jpeg,image/gif,image/webp" data-preview="${id('image-preview')}" aria-describedby="${id('image-file-hint')}${input.error ? ` ${id('image-file-error')}` : ''}"${input.error ? html` aria-invalid="true"` : ''}>
<p class="hint" id="${id('image-file-hint')}">PNG, JPEG, GIF or WebP, up to ${mib} MiB. Stored and served by this server.</p>
${input.error ? html`<div class="error" id="${id('image-file-error')}" role="alert">${input.error}</div>` : ''}
<div class="actions"><button type="submit" name="do" value="upload">Upload ${input.label.toLowerCase()}</button>${input.current ? html` <button type="submit" name="do" value="remove" class="secondary">Remove ${input.label.toLowerCase()}</button>` : ''}</div>
</form>`;
}
