import { describe, expect, it } from 'vitest';
import { settingsAdvice } from '../../src/storage/postgres-settings.js';

describe('advice on the PostgreSQL server settings Gatehouse depends on', () => {
  it('autovacuum on (PostgreSQL\'s default): no advice', () => {
    expect(settingsAdvice({ autovacuum: 'on' })).toEqual([]);
  });

  it('autovacuum off: one warning saying that plans of grown tables stay and what to do', () => {
    const advice = settingsAdvice({ autovacuum: 'off' });
    expect(advice).toHaveLength(1);
    expect(advice[0]).toMatch(/autovacuum is off/);
    expect(advice[0]).toMatch(/ANALYZE/);
  });
});
