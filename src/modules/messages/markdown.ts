import { escapeHtml, raw, type SafeHtml } from '../../web/html.js';

/**
 * The small Markdown subset chat messages and embed descriptions are shown with (issue #5:
 * "content as escaped text with basic markdown … and no HTML"). Everything the author typed is
 * escaped; the only markup in the output is what this file writes:
 *
 * - `**bold**` → <strong>, `*italics*` and `_italics_` → <em>, `__underline__` → <u>,
 *   `~~strike~~` → <s>;
 * - `` `code` `` → <code>, and ```` ```code blocks``` ```` (an optional language name on the first
 *   line is dropped) → <pre><code>; nothing inside code is interpreted;
 * - `[text](https://…)`, `<https://…>` and bare `https://…` URLs → links that open in a new tab with
 *   rel="noopener noreferrer nofollow"; only http: and https: URLs become links (javascript:,
 *   data: and every other scheme stay text); a masked link carries its real address as its title;
 * - a backslash before a markup character keeps it literal (`\*not italics\*`).
 *
 * Line breaks are kept by the stylesheet (white-space: pre-wrap). Parsing is a single left-to-right
 * pass with bounded nesting, and every input renders in time linear in its length (issue #21 §1,
 * shown by bench/adversarial.mjs), however many openers lack a closer:
 * - a rule that scans ahead for its closer and finds none remembers it (`failFrom`): no closer
 *   after position p means none after any later position, so the scan is not repeated per opener;
 * - each scan of a link's URL stops at the next `[`, so scans of successive links never overlap;
 * - a bare URL is only tried where it may start (not after a letter or digit), and a run that is
 *   not a valid URL is shown as text whole, instead of being rescanned from each later `http`;
 * - trailing punctuation is trimmed from a bare URL with running parenthesis counts.
 */

/** How deep emphasis may nest before the rest is shown as text. */
const MAX_DEPTH = 5;

const LINK_ATTRS = ' target="_blank" rel="noopener noreferrer nofollow"';

interface Rule {
  re: RegExp;
  /**
   * Set on rules that scan ahead for a closer which, once absent after one opener, is absent after
   * every later one: this sticky regex recognises the opener alone, and a failed match where
   * the opener is present means the rule cannot match anywhere further on in this text.
   */
  opener?: RegExp;
  /** Checked before the regex runs, so a rule that cannot apply here costs nothing. */
  applies?(state: State, text: string, at: number): boolean;
  render(m: RegExpExecArray, state: State, text: string, at: number): string | undefined;
}

interface State {
  depth: number;
  /** Inside a link's text: no links inside links. */
  inLink: boolean;
}

/** http(s) URLs only, normalised by the URL parser (quotes and spaces percent-encoded). */
export function safeHttpUrl(candidate: string): string | undefined {
  let url: URL;
  try {
    url = new URL(candidate);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined;
  return url.href;
}

function link(href: string, inner: string, title?: string): string {
  return `<a href="${escapeHtml(href)}"${title === undefined ? '' : ` title="${escapeHtml(title)}"`}${LINK_ATTRS}>${inner}</a>`;
}

/** A bare URL ends before trailing punctuation, and before an unbalanced closing parenthesis. */
export function trimBareUrl(url: string): string {
  // Parentheses counted once, then kept current as characters are trimmed: linear in the URL.
  let open = 0;
  let close = 0;
  for (let i = 0; i < url.length; i++) {
    const c = url.charCodeAt(i);
    if (c === 0x28) open += 1;
    else if (c === 0x29) close += 1;
  }
  let end = url.length;
  for (;;) {
    const last = url[end - 1];
    if (last === undefined) break;
    if ('.,:;!?\'"*_~'.includes(last)) {
      end -= 1;
      continue;
    }
    if (last === ')' && close > open) {
      close -= 1;
      end -= 1;
      continue;
    }
    break;
  }
  return url.slice(0, end);
}

function isWordChar(c: string | undefined): boolean {
  return c !== undefined && /[\p{L}\p{N}_]/u.test(c);
}

const RULES: Rule[] = [
  {
    // A backslash keeps the next markup character literal.
    re: /\\([\\`*_~[\]()<>|#-])/y,
    render: (m) => escapeHtml(m[1] ?? ''),
  },
  {
    re: /```([\s\S]*?)```/y,
    opener: /```/y,
    render: (m) => {
      let code = m[1] ?? '';
      // ```lang\n… : the language name is not shown (no highlighting).
      const lang = /^[A-Za-z0-9_+#.-]{1,32}\n/.exec(code);
      if (lang && code.length > lang[0].length) code = code.slice(lang[0].length);
      else if (code.startsWith('\n')) code = code.slice(1);
      if (code.trim() === '') return undefined;
      return `<pre><code>${escapeHtml(code.replace(/\n$/, ''))}</code></pre>`;
    },
  },
  {
    // One or two backticks open inline code (three open a block); a longer run is text.
    re: /``(?!`)([\s\S]*?[^`])``(?!`)/y,
    opener: /``(?!`)/y,
    render: (m) => `<code>${escapeHtml(m[1] ?? '')}</code>`,
  },
  {
    re: /`(?!`)([\s\S]*?[^`])`(?!`)/y,
    opener: /`(?!`)/y,
    render: (m) => `<code>${escapeHtml(m[1] ?? '')}</code>`,
  },
  {
    // [text](https://…), the URL optionally in <>; one level of parentheses inside the URL. No
    // `[` in the URL (percent-encode it as %5B): the scan for one link's URL never runs into the
    // next link, which keeps a message of many unclosed links linear.
    re: /\[((?:\\[\s\S]|[^[\]\\\n]){1,256})\]\(\s*<?((?:[^\s()<>[]|\([^\s()<>[]*\))+)>?\s*\)/y,
    render: (m, state) => {
      if (state.inLink) return undefined;
      const href = safeHttpUrl(m[2] ?? '');
      if (!href) return undefined;
      const inner = parse(m[1] ?? '', { depth: state.depth + 1, inLink: true });
      if (inner.trim() === '') return undefined;
      return link(href, inner, href);
    },
  },
  {
    // <https://…>: a link without a preview, as in Discord.
    re: /<(https?:\/\/[^\s<>]+)>/iy,
    render: (m, state) => {
      if (state.inLink) return undefined;
      const href = safeHttpUrl(m[1] ?? '');
      return href ? link(href, escapeHtml(m[1] ?? '')) : undefined;
    },
  },
  {
    re: /https?:\/\/[^\s<]+/iy,
    applies: (state, text, at) => !state.inLink && !isWordChar(text[at - 1]),
    render: (m) => {
      const shown = trimBareUrl(m[0]);
      const href = safeHttpUrl(shown);
      // Not a URL: the whole run up to the next space is text, scanned once.
      if (!href) return escapeHtml(m[0]);
      // The rule consumed the trailing punctuation too; give it back as text.
      return link(href, escapeHtml(shown)) + escapeHtml(m[0].slice(shown.length));
    },
  },
  {
    re: /\*\*([\s\S]+?)\*\*(?!\*)/y,
    opener: /\*\*/y,
    render: (m, state) => wrap('strong', m[1], state),
  },
  {
    re: /__([\s\S]+?)__(?!_)/y,
    opener: /__/y,
    render: (m, state) => wrap('u', m[1], state),
  },
  {
    re: /~~([\s\S]+?)~~/y,
    opener: /~~/y,
    render: (m, state) => wrap('s', m[1], state),
  },
  {
    re: /\*(?![\s*])([\s\S]*?[^\s\\])\*(?!\*)/y,
    opener: /\*(?![\s*])/y,
    render: (m, state) => wrap('em', m[1], state),
  },
  {
    // _italics_ only at word edges, so snake_case_names stay as typed.
    re: /_(?![\s_])((?:\\[\s\S]|[^\\_])+?)_/y,
    render: (m, state, text, at) => {
      if (isWordChar(text[at - 1]) || isWordChar(text[at + m[0].length])) return undefined;
      return wrap('em', m[1], state);
    },
  },
];

function wrap(tag: string, inner: string | undefined, state: State): string | undefined {
  if (inner === undefined || inner.trim() === '') return undefined;
  return `<${tag}>${parse(inner, { depth: state.depth + 1, inLink: state.inLink })}</${tag}>`;
}

/** Characters where a rule may start; everything between them is plain text. */
const PLAIN = /[^\\`*_~[<hH]+/y;

function parse(text: string, state: State): string {
  if (state.depth > MAX_DEPTH) return escapeHtml(text);
  let out = '';
  let at = 0;
  // failFrom[r]: rule r found no closer after this position, so it is not tried again further on.
  const failFrom: number[] = RULES.map(() => Infinity);
  while (at < text.length) {
    let matched = false;
    for (let r = 0; r < RULES.length; r++) {
      const rule = RULES[r] as Rule;
      if (at >= (failFrom[r] as number)) continue;
      if (rule.applies && !rule.applies(state, text, at)) continue;
      rule.re.lastIndex = at;
      const m = rule.re.exec(text);
      if (!m) {
        if (rule.opener) {
          rule.opener.lastIndex = at;
          if (rule.opener.test(text)) failFrom[r] = at;
        }
        continue;
      }
      const rendered = rule.render(m, state, text, at);
      if (rendered === undefined) continue;
      out += rendered;
      at += m[0].length;
      matched = true;
      break;
    }
    if (matched) continue;
    // No rule here: this character is text, and so is everything up to the next candidate.
    out += escapeHtml(text[at] ?? '');
    at += 1;
    PLAIN.lastIndex = at;
    const plain = PLAIN.exec(text);
    if (plain) {
      out += escapeHtml(plain[0]);
      at += plain[0].length;
    }
  }
  return out;
}

/** Renders message text with the subset above; the result is safe to put inside an element. */
export function renderMarkdown(text: string): SafeHtml {
  return raw(parse(text, { depth: 0, inLink: false }));
}
