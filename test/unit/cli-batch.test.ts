import { describe, expect, it } from 'vitest';
import { resolveCommand, type CliCommand } from '../../src/cli/command.js';
import { splitCommandLine } from '../../src/cli/commands/batch.js';

describe('gatehouse batch: one command line per input line', () => {
  it('splits words on blanks, as the command line does', () => {
    expect(splitCommandLine('channels create  --server 123\t--name bench-1')).toEqual(['channels', 'create', '--server', '123', '--name', 'bench-1']);
  });

  it('keeps blanks inside "double quotes", which may start mid-word', () => {
    expect(splitCommandLine('servers create --owner alice --name "Bench server"')).toEqual(['servers', 'create', '--owner', 'alice', '--name', 'Bench server']);
    expect(splitCommandLine('x --name="two words"')).toEqual(['x', '--name=two words']);
  });

  it('reads \\" and \\\\ inside quotes as a quote and a backslash, and an empty "" as an empty word', () => {
    expect(splitCommandLine('x --topic "say \\"hi\\" \\\\o/" --name ""')).toEqual(['x', '--topic', 'say "hi" \\o/', '--name', '']);
  });

  it('refuses a line whose quote is never closed', () => {
    expect(() => splitCommandLine('x --name "open')).toThrow(/unterminated/);
  });
});

describe('resolveCommand: the one lookup for argv and for each batch line', () => {
  const command = (name: string): CliCommand => ({ name, summary: name, flags: {}, run: async () => ({}) });
  const commands = [command('people create'), command('seed-demo'), command('channels create')];

  it('a noun and a verb name a command; the words after them are its arguments', () => {
    const { command: found, args } = resolveCommand(commands, ['people', 'create', '--username', 'ann']);
    expect(found.name).toBe('people create');
    expect(args).toEqual(['--username', 'ann']);
  });

  it('a one-word command takes its flags straight after its name', () => {
    const { command: found, args } = resolveCommand(commands, ['seed-demo', '--json']);
    expect(found.name).toBe('seed-demo');
    expect(args).toEqual(['--json']);
    expect(resolveCommand(commands, ['seed-demo']).args).toEqual([]);
  });

  it('an unknown command is a usage error that names the words, not the flags', () => {
    expect(() => resolveCommand(commands, ['frobnicate', 'now', '--x'])).toThrow('unknown command "frobnicate now"');
    expect(() => resolveCommand(commands, ['frobnicate', '--x'])).toThrow('unknown command "frobnicate"');
    expect(() => resolveCommand(commands, ['people'])).toThrow('unknown command "people"');
  });
});
