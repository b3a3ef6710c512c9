import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';

/**
 * The stylesheet and browser scripts are real files beside this module (src/web/assets/, copied
 * next to the compiled module by `npm run build`), so ESLint and editors read them as CSS and
 * JavaScript. They are read once at start-up and served under a URL carrying their content hash:
 * browsers may cache them forever, and a changed file gets a new URL. Being files served from
 * this origin, they are what the strict CSP allows (script-src and style-src 'self', no inline
 * code; DESIGN §4, OAUTH-CHECKLIST A15).
 */
interface Asset {
  /** The URL pages link to: `/assets/<name>.<hash>.<ext>`. */
  path: string;
  /** Content-Type to serve it with. */
  type: string;
  body: string;
}

function load(file: string, type: string): Asset {
  const body = readFileSync(new URL(`./assets/${file}`, import.meta.url), 'utf8');
  const dot = file.lastIndexOf('.');
  const hash = createHash('sha256').update(body).digest('hex').slice(0, 12);
  return {
    path: `/assets/${file.slice(0, dot)}.${hash}${file.slice(dot)}`,
    type,
    body,
  };
}

export const APP_CSS = load('app.css', 'text/css; charset=utf-8');
/** Copy buttons and select-on-focus fields (developer portal). */
export const APP_JS = load('app.js', 'text/javascript; charset=utf-8');
/** The live channel view (issue #5). */
export const APP_LIVE_JS = load('live.js', 'text/javascript; charset=utf-8');

/** Channel names slugged as they are typed (server settings → Channels, issue #24). */
export const APP_CHANNEL_NAME_JS = load('channel-name.js', 'text/javascript; charset=utf-8');

/** Older history as the channel view is scrolled up, "Jump to present", times in the reader's zone (issue #24). */
export const APP_HISTORY_JS = load('history.js', 'text/javascript; charset=utf-8');

/** The channel composer: Enter sends without a reload (issue #24). */
export const APP_COMPOSER_JS = load('composer.js', 'text/javascript; charset=utf-8');
/** The composer's `/` list of app commands, a WAI-ARIA combobox (issue #40 §2). */
const APP_COMMANDS_JS = load('commands.js', 'text/javascript; charset=utf-8');
/** Inline edit and delete of messages (issue #24). */
export const APP_MESSAGE_ACTIONS_JS = load('message-actions.js', 'text/javascript; charset=utf-8');

/** Skip-link and error-message focus on every page (issue #24 accessibility). */
export const APP_A11Y_JS = load('a11y.js', 'text/javascript; charset=utf-8');

/** Passkey registration and sign-in: the browser's WebAuthn ceremonies (issue #38 §4). */
const APP_PASSKEYS_JS = load('passkeys.js', 'text/javascript; charset=utf-8');

export const ASSETS: readonly Asset[] = [APP_CSS, APP_JS, APP_LIVE_JS, APP_A11Y_JS, APP_COMPOSER_JS, APP_COMMANDS_JS, APP_MESSAGE_ACTIONS_JS, APP_HISTORY_JS, APP_CHANNEL_NAME_JS, APP_PASSKEYS_JS];

export const APP_CSS_PATH = APP_CSS.path;
export const APP_JS_PATH = APP_JS.path;
export const APP_LIVE_JS_PATH = APP_LIVE_JS.path;
export const APP_HISTORY_JS_PATH = APP_HISTORY_JS.path;
export const APP_COMPOSER_JS_PATH = APP_COMPOSER_JS.path;
export const APP_COMMANDS_JS_PATH = APP_COMMANDS_JS.path;
export const APP_MESSAGE_ACTIONS_JS_PATH = APP_MESSAGE_ACTIONS_JS.path;
export const APP_CHANNEL_NAME_JS_PATH = APP_CHANNEL_NAME_JS.path;
export const PASSKEYS_JS_PATH = APP_PASSKEYS_JS.path;

