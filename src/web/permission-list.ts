import { LISTED_PERMISSIONS, PERMISSION_CATALOG } from '../core/permission-catalog.js';
import { permissionNames, type PermissionName } from '../core/permissions.js';
import { html, type SafeHtml } from './html.js';

/** One permission as a page lists it (in the catalog's order within its group). */
export interface PermissionListItem {
  name: PermissionName;
  /** A checkbox state; undefined lists the permission as text, without a box. */
  box?: { checked: boolean; disabled: boolean } | undefined;
  /** Struck through (cannot be given). */
  struck?: boolean;
  /** A further line, e.g. why it cannot be given. */
  note?: SafeHtml | undefined;
}

export interface PermissionListOptions {
  /** The checkboxes' form field name and the prefix of their ids. */
  field: string;
  idPrefix: string;
  items: readonly PermissionListItem[];
  /**
   * Bits the page does not list but the form must keep sending (hidden inputs), so that saving
   * changes nothing about bits that do nothing here.
   */
  keep?: bigint;
}

/**
 * The permission lists of the role editor, URL generator and consent screen (issue #24): only
 * the permissions in PERMISSION_CATALOG, grouped as Discord groups them, each with its one line
 * (the hint that describes its checkbox).
 */
export function permissionList(options: PermissionListOptions): SafeHtml {
  const byName = new Map(options.items.map((item) => [item.name, item]));
  const groups = PERMISSION_CATALOG.map((group) => ({
    title: group.title,
    rows: group.entries.flatMap((entry) => {
      const item = byName.get(entry.name);
      return item ? [{ item, entry }] : [];
    }),
  })).filter((group) => group.rows.length > 0);
  const kept = permissionNames((options.keep ?? 0n) & ~LISTED_PERMISSIONS);
  return html`${groups.map(
    (group) => html`<fieldset class="permission-group"><legend>${group.title}</legend>${group.rows.map(({ item, entry }) => {
      const id = `${options.idPrefix}-${entry.name.toLowerCase()}`;
      const label = item.struck ? html`<s>${entry.label}</s>` : html`${entry.label}`;
      const text = html`${label}<br><span class="hint" id="${id}-hint">${entry.description}</span>${item.note ? html`<br>${item.note}` : ''}`;
      if (!item.box) return html`<p class="permission-item"><span>${text}</span></p>`;
      return html`<label class="check${item.struck ? ' not-grantable' : ''}"><input type="checkbox" id="${id}" name="${options.field}" value="${entry.name}"${item.box.checked ? html` checked` : ''}${item.box.disabled ? html` disabled` : ''} aria-describedby="${id}-hint"> <span>${text}</span></label>`;
    })}</fieldset>`,
  )}${kept.map((name) => html`<input type="hidden" name="${options.field}" value="${name}">`)}`;
}

