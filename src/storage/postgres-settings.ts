/**
 * What: the PostgreSQL server settings Gatehouse depends on but does not set, and what to tell an
 * operator whose server has them off (logged when the server starts, main.ts).
 * Invariant: pure: settings in, advice out; storage/postgres.ts reads the settings.
 * Tested: test/unit/postgres-settings.test.ts, test/storage/postgres-pool.test.ts.
 */

/** The settings read at start-up, as `current_setting` answers them. */
export interface AdvisedSettings {
  autovacuum: string;
}

/** One sentence per setting that is off, saying what goes wrong; none when all is as advised. */
export function settingsAdvice(settings: AdvisedSettings): string[] {
  const advice: string[] = [];
  // The hot-path statements are prepared once per connection (storage/prepared.ts), so PostgreSQL
  // plans them with the statistics of that moment and keeps the plan until something analyzes the
  // table. Without autovacuum, a statement prepared while a table was small keeps a sequential
  // scan as the table grows: measured, a code exchange's lookup read all 65,000 grants per call
  // (docs/performance.md).
  if (settings.autovacuum !== 'on') {
    advice.push(
      'PostgreSQL autovacuum is off: tables are never analyzed, so statements prepared while a table was small keep plans that scan it whole as it grows. Turn autovacuum on (the default), or run ANALYZE regularly.',
    );
  }
  return advice;
}
