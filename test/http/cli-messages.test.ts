import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveCommand } from '../../src/cli/command.js';
import { commands } from '../../src/cli/commands/index.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { runCommand } from '../support/directory-fixtures.js';

/**
 * Issue #36 §4: seed-demo run twice told the operator to reset passwords with "gatehouse people"
 * commands that do not exist. What the CLI tells an operator to run must be a command it has.
 */
const BUILT_IN = new Set(['serve', 'migrate', 'secret adopt']);

/** Every `gatehouse <noun> [<verb>]` a sentence names that is not a command of the CLI. */
function unknownCommands(text: string): string[] {
  const unknown: string[] = [];
  for (const match of text.matchAll(/gatehouse ([a-z][a-z-]*)(?: ([a-z][a-z-]*))?/g)) {
    const words = [match[1], match[2]].filter((w): w is string => w !== undefined);
    if (BUILT_IN.has(words.join(' '))) continue;
    try {
      resolveCommand(commands, words);
    } catch {
      unknown.push(words.join(' '));
    }
  }
  return unknown;
}

describe('issue #36 §4: seed-demo names only commands that exist', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t.close());

  it('run twice, it says the passwords were shown once and how to get a new demo, without promising a password-reset command', async () => {
    await runCommand(t, 'seed-demo', []);
    const again = await runCommand(t, 'seed-demo', []);
    expect(again['created']).toBe(false);
    const message = String(again['message']);
    expect(message).toContain('not shown again');
    expect(message).toContain('DATABASE_URL');
    expect(unknownCommands(message)).toEqual([]);
  });

  it('the check finds a command the CLI does not have', () => {
    expect(unknownCommands('reset them with "gatehouse people" commands')).toEqual(['people']);
    expect(unknownCommands('run "gatehouse people create" or "gatehouse seed-demo"')).toEqual([]);
  });
});
