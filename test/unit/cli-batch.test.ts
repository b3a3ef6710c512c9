import { describe, expect, it } from 'vitest';
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
