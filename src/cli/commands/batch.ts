import { createInterface } from 'node:readline';
import { ApiError } from '../../core/errors.js';
import type { Services } from '../../deps.js';
import { CliUsageError, parseFlags, resolveCommand, type CliCommand } from '../command.js';

/**
 * `gatehouse batch`: many commands in one process (DESIGN §8). Creating hundreds of channels with
 * one process each pays the start-up and migration check every time; here stdin carries one
 * command per line in the command line's own syntax (`channels create --server 123 --name a`),
 * all run against one connection, and stdout gets exactly one JSON object per input line, in order.
 */

/**
 * Splits one line like a shell would for our purposes: words separated by blanks; "double
 * quotes" keep blanks, and inside them \" and \\ stand for " and \. Throws on an open quote.
 */
export function splitCommandLine(line: string): string[] {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  let quoted = false;
  for (let i = 0; i < line.length; i += 1) {
    const c = line[i] as string;
    if (quoted) {
      if (c === '\\' && (line[i + 1] === '"' || line[i + 1] === '\\')) {
        word += line[i + 1];
        i += 1;
      } else if (c === '"') quoted = false;
      else word += c;
    } else if (c === '"') {
      quoted = true;
      inWord = true;
    } else if (c === ' ' || c === '\t') {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (quoted) throw new CliUsageError('unterminated "quote"');
  if (inWord) words.push(word);
  return words;
}

/** What one failed line prints: its number and the same message the single command would give. */
function failure(lineNumber: number, error: unknown): Record<string, unknown> {
  if (error instanceof ApiError) return { line: lineNumber, error: error.message, ...(error.errors ? { errors: error.errors } : {}) };
  return { line: lineNumber, error: error instanceof Error ? error.message : String(error) };
}

async function runBatch(commands: readonly CliCommand[], services: Services, stopOnError: boolean, input: NodeJS.ReadableStream, output: NodeJS.WritableStream): Promise<{ lines: number; failed: number }> {
  let lines = 0;
  let failed = 0;
  let lineNumber = 0;
  const reader = createInterface({ input, crlfDelay: Infinity });
  for await (const raw of reader) {
    lineNumber += 1;
    const line = raw.trim();
    // Blank lines and # comments let a script be annotated; they print nothing.
    if (line === '' || line.startsWith('#')) continue;
    lines += 1;
    let record: Record<string, unknown>;
    try {
      const words = splitCommandLine(line);
      if (words[0] === 'batch') throw new CliUsageError('batch cannot run inside batch');
      const { command, args } = resolveCommand(commands, words);
      const { flags } = parseFlags(args, command.flags);
      record = await command.run(services, flags);
    } catch (error) {
      failed += 1;
      record = failure(lineNumber, error);
    }
    output.write(`${JSON.stringify(record)}\n`);
    if (failed > 0 && stopOnError) break;
  }
  reader.close();
  return { lines, failed };
}

/** `batch` over `commands`, the list it may run (commands/index.ts passes every other command). */
export function batchCommand(commands: readonly CliCommand[]): CliCommand {
  return {
    name: 'batch',
    summary: 'run many commands from stdin, one per line; prints one JSON object per line',
    flags: {
      'stop-on-error': { description: 'stop at the first line that fails (default: go on)', boolean: true },
    },
    async run(services, flags) {
      const { lines, failed } = await runBatch(commands, services, flags.bool('stop-on-error'), process.stdin, process.stdout);
      // A non-zero exit status tells a script that some line failed; each failed line says why.
      if (failed > 0) throw new Error(`${failed} of ${lines} commands failed (see the "error" lines on stdout)`);
      return { batch: { lines, failed } };
    },
  };
}
