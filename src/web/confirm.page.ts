import { dangerForm, page, type PageCtx } from './components.js';
import { html, type SafeHtml } from './html.js';

/**
 * "Delete …?" (issue #24, "Managing"): the step every destructive action goes through, saying what
 * it removes. Reached by a link (GET, so it works without JavaScript and changes nothing); its one
 * button POSTs to the same address, and Cancel goes back. The webhook pages use the same dangerForm.
 */
export interface Confirmation {
  /** The page title and heading, e.g. "Delete # general?". */
  question: string;
  /** What goes, and what stays. */
  consequence: SafeHtml;
  /** Where the button posts (the address of this page). */
  action: string;
  button: string;
  cancel: string;
}

export function confirmationPage(ctx: PageCtx, confirm: Confirmation): string {
  return page(
    ctx,
    confirm.question,
    html`<div class="card confirm">
<h1>${confirm.question}</h1>
<p>${confirm.consequence}</p>
${dangerForm(ctx.csrfToken, confirm.action, confirm.button, confirm.cancel)}
</div>`,
    { width: 'narrow' },
  );
}
