import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { ManualClock } from '../../src/core/clock.js';
import { createTestApp, type TestApp, type TestAppOptions } from './app.js';
import { freePort } from './ports.js';

/**
 * Browser tests drive the system Chromium (Debian package `chromium`, DESIGN §6) with
 * playwright-core, which downloads no browser of its own. `.ci/run` installs it when missing.
 */
export const CHROMIUM_PATH = '/usr/bin/chromium';
export const chromiumAvailable = existsSync(CHROMIUM_PATH);

/** Printed once by each browser test file that is skipped, so a skip is never silent (DESIGN §6). */
export function warnIfChromiumMissing(file: string): void {
  if (!chromiumAvailable) {
    console.warn(`${file}: skipped: ${CHROMIUM_PATH} is missing. Install it with "apt-get install chromium" (or run .ci/run) to run the browser tests.`);
  }
}

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** Screenshots land here (gitignored); CI can keep them as artifacts. */
export const SCREENSHOT_DIR = join(ROOT, 'test-results');

const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
  '--disable-sync',
  '--disable-quic',
];

export interface BrowserSession {
  context: BrowserContext;
  page: Page;
  close(): Promise<void>;
}

/**
 * A fresh Chromium with its own temporary profile: no cookies, cache or history from earlier runs.
 * `javaScriptEnabled: false` checks that a page works without its scripts.
 */
export async function launchBrowser(viewport = { width: 1280, height: 860 }, options: { javaScriptEnabled?: boolean } = {}): Promise<BrowserSession> {
  const profile = mkdtempSync(join(tmpdir(), 'gatehouse-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport,
    javaScriptEnabled: options.javaScriptEnabled ?? true,
  });
  const page = context.pages()[0] ?? (await context.newPage());
  return {
    context,
    page,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Time moves as it does for the browser: cookies, sessions and message times stay consistent. */
class WallClock extends ManualClock {
  override now(): number {
    return Date.now();
  }
}

export interface ServedApp {
  t: TestApp;
  /** e.g. http://127.0.0.1:41234; also the app's GATEHOUSE_BASE_URL, so CSRF origin checks pass. */
  baseUrl: string;
  close(): Promise<void>;
}

/**
 * The test app on a real port. The base URL must name the port (pages check the Origin of every
 * form post against it), and the port must be known before the app is built, so: pick a free
 * port, build the app for it, listen on it; if another process took it in between, try again.
 */
export async function serveTestApp(options: TestAppOptions = {}): Promise<ServedApp> {
  for (let attempt = 1; ; attempt += 1) {
    const port = await freePort();
    const baseUrl = `http://127.0.0.1:${port}`;
    const t = await createTestApp({ clock: new WallClock(), ...options, env: { ...options.env, GATEHOUSE_BASE_URL: baseUrl } });
    try {
      await t.app.listen({ port, host: '127.0.0.1' });
      return { t, baseUrl, close: () => t.close() };
    } catch (error) {
      await t.close();
      if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE' || attempt >= 5) throw error;
    }
  }
}

/** Saves a screenshot (the whole page unless `fullPage: false`) as test-results/<name>.png and returns its path. */
/** Fills the sign-in form on the page and submits it; the caller waits for wherever it leads. */
export async function submitSignIn(page: Page, username: string, password: string): Promise<void> {
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

export async function screenshot(page: Page, name: string, options: { fullPage?: boolean } = {}): Promise<string> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const path = join(SCREENSHOT_DIR, `${name}.png`);
  await page.screenshot({ path, fullPage: options.fullPage ?? true });
  return path;
}

/** Keeps the page's uncaught errors and console errors (a missing favicon aside) in `problems`. */
export function collectProblems(page: Page, problems: string[]): void {
  page.on('pageerror', (e) => problems.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error' && !m.location().url.endsWith('/favicon.ico')) problems.push(m.text());
  });
}

/** Signs in with the sign-in form, as a person would, and waits for the home page. */
export async function signInWithForm(page: Page, baseUrl: string, person: { username: string; password: string }): Promise<void> {
  await page.goto(`${baseUrl}/login`);
  await page.getByLabel('Username').fill(person.username);
  await page.getByLabel('Password').fill(person.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL((url) => url.pathname === '/');
}
