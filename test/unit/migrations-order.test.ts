import { describe, expect, it } from 'vitest';
import { migrations } from '../../src/storage/migrations/index.js';

/**
 * Kysely applies migrations in the order of their names; the list in src/storage/migrations/index.ts
 * is what `gatehouse migrate --json` reports as applied, so it must be written in that order too.
 */
describe('the migration list', () => {
  it('is in the order Kysely applies it: sorted by name', () => {
    const names = Object.keys(migrations);
    expect(names).toEqual([...names].sort());
  });
});
