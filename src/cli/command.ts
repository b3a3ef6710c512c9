import type { Services } from '../services.js';
import { hasForbiddenControl } from '../core/text.js';

/** One `gatehouse <noun> <verb>` command. Commands live in cli/commands/, one file per noun. */
export interface CliCommand {
  /** "people create" */
  name: string;
  summary: string;
  flags: Record<string, FlagSpec>;
  /** Returns the record to print (`--json`: exactly this object on stdout, secrets included). */
  run(services: Services, flags: ParsedFlags): Promise<Record<string, unknown>>;
}

export interface FlagSpec {
  description: string;
  required?: boolean;
  /** May be given several times (e.g. --redirect-uri); collected into an array. */
  repeatable?: boolean;
  /** Takes no value (e.g. --public). */
  boolean?: boolean;
}

export interface ParsedFlags {
  string(name: string): string | undefined;
  list(name: string): string[];
  bool(name: string): boolean;
}

export class CliUsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CliUsageError';
  }
}

/**
 * The command that a command line's words name, `noun verb`, `noun object verb` or a one-word command (`seed-demo`,
 * whose flags follow its name), and the arguments after it. The one lookup for argv and for each
 * `batch` line.
 */
export function resolveCommand(commands: readonly CliCommand[], words: readonly string[]): { command: CliCommand; args: string[] } {
  const [first, second, ...rest] = words;
  // Issue #41: `apps resource add` — a three-word command is looked for before `noun verb`.
  const third = rest[0];
  const three = third !== undefined && !third.startsWith('--') ? commands.find((c) => c.name === `${first ?? ''} ${second ?? ''} ${third}`) : undefined;
  if (three) return { command: three, args: rest.slice(1) };
  const single = second === undefined || second.startsWith('--') ? commands.find((c) => c.name === first) : undefined;
  if (single) return { command: single, args: second === undefined ? rest : [second, ...rest] };
  const command = commands.find((c) => c.name === `${first ?? ''} ${second ?? ''}`.trim());
  if (!command) {
    const named = [first, second].filter((w): w is string => w !== undefined && !w.startsWith('--'));
    throw new CliUsageError(`unknown command "${named.join(' ')}"`);
  }
  return { command, args: rest };
}

/** Parses `--name value`, `--name=value` and boolean `--flag` against a command's flag specs. */
export function parseFlags(args: string[], specs: Record<string, FlagSpec>): { flags: ParsedFlags; json: boolean } {
  const values = new Map<string, string[]>();
  let json = false;
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i] as string;
    if (!arg.startsWith('--')) throw new CliUsageError(`unexpected argument "${arg}"`);
    const eq = arg.indexOf('=');
    const name = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
    if (name === 'json') {
      json = true;
      continue;
    }
    const spec = specs[name];
    if (!spec) throw new CliUsageError(`unknown flag --${name}`);
    let value: string;
    if (spec.boolean) value = eq === -1 ? 'true' : arg.slice(eq + 1);
    else if (eq !== -1) value = arg.slice(eq + 1);
    else {
      const next = args[i + 1];
      if (next === undefined) throw new CliUsageError(`--${name} needs a value`);
      value = next;
      i += 1;
    }
    // Issue #21 §5: the text rule every HTTP input obeys (core/text.ts); batch input on stdin can hold any character.
    if (hasForbiddenControl(value)) throw new CliUsageError(`--${name} must not contain control characters (such as NUL)`);
    const list = values.get(name) ?? [];
    if (list.length > 0 && !spec.repeatable) throw new CliUsageError(`--${name} given more than once`);
    list.push(value);
    values.set(name, list);
  }
  for (const [name, spec] of Object.entries(specs)) {
    if (spec.required && !values.has(name)) throw new CliUsageError(`--${name} is required`);
  }
  return {
    json,
    flags: {
      string: (name) => values.get(name)?.[0],
      list: (name) => values.get(name) ?? [],
      bool: (name) => {
        const v = values.get(name)?.[0];
        return v !== undefined && v !== 'false' && v !== '0';
      },
    },
  };
}
