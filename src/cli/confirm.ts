import { createInterface } from 'node:readline/promises';
import { CliUsageError, type ParsedFlags } from './command.js';

/**
 * Issue #39: a destructive command says what it will remove before it does. With `--yes` it goes
 * ahead; on a terminal it asks (standard error) and goes ahead only on "yes"; otherwise (a
 * script, a pipe, `gatehouse batch`) it refuses, exit status 2, and nothing changes.
 */
export async function confirmDestructive(summary: string, yes: boolean): Promise<void> {
  if (yes) return;
  if (process.stdin.isTTY !== true) throw new CliUsageError(`${summary}\nNothing was changed: add --yes to go ahead (standard input is not a terminal, so there is no one to ask).`);
  const prompt = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = await prompt.question(`${summary}\nType "yes" to go ahead: `);
    if (answer.trim().toLowerCase() !== 'yes') throw new CliUsageError('Cancelled; nothing was changed.');
  } finally {
    prompt.close();
  }
}

/** The `--yes` flag of every destructive command. */
export const YES_FLAG = { yes: { description: 'go ahead without asking (required when standard input is not a terminal)', boolean: true } } as const;

/** `--limit`: a whole number from 1 to `max` (default `max`). */
export function pageLimit(flags: ParsedFlags, max: number): number {
  const raw = flags.string('limit');
  if (raw === undefined) return max;
  if (!/^[0-9]+$/.test(raw) || Number(raw) < 1 || Number(raw) > max) throw new CliUsageError(`--limit must be a whole number from 1 to ${max}`);
  return Number(raw);
}
