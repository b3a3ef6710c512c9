import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Result } from 'axe-core';
import type { Page } from 'playwright-core';

/**
 * axe-core (issue #24 "Done when": an automated accessibility check on every page). Its source is
 * read from node_modules and evaluated through the DevTools protocol (page.evaluate), which the
 * page's strict CSP does not govern; an injected inline <script> (addScriptTag({ content })) is
 * refused by that CSP (script-src 'self'). So the pages are checked exactly as they are served,
 * with no bypassCSP.
 */
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** WCAG 2.x A and AA rules and axe's best practices (landmarks, heading order, skip links). */
const AXE_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'];

/** One rule axe-core found broken, with CSS selectors of the offending elements. */
export type AxeViolation = Pick<Result, 'id' | 'impact' | 'help'> & { targets: string[] };

/** The serious and critical WCAG A/AA violations on the page as it is now. */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  if (!(await page.evaluate('typeof window.axe === "object"'))) await page.evaluate(AXE_SOURCE);
  // A string, evaluated in the page (the test project has no DOM types).
  const violations = await page.evaluate<AxeViolation[]>(`(async () => {
    const result = await window.axe.run(document, { runOnly: { type: 'tag', values: ${JSON.stringify(AXE_TAGS)} } });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.map((n) => n.target.join(' ')) }));
  })()`);
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}
