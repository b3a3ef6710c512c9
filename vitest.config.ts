import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/**/*.test.ts', 'src/**/*.test.ts'],
          exclude: ['test/browser/**', 'test/reliability/**'],
          // Projects run one group after another, so the timing-sensitive reliability checks
          // (ceilings that catch a hang, such as a restart that never serves) never share the 2 cores with the unit suite.
          sequence: { groupOrder: 0 },
          testTimeout: 30_000,
          hookTimeout: 60_000,
        },
      },
      {
        // Issue #7: crash, race, scale-out, fault, fuzz and security tests. They start real server
        // processes (from dist/) and dedicated databases, so they run one file at a time.
        test: {
          name: 'reliability',
          include: ['test/reliability/**/*.test.ts'],
          sequence: { groupOrder: 1 },
          testTimeout: 180_000,
          hookTimeout: 180_000,
          fileParallelism: false,
        },
      },
      {
        test: {
          name: 'browser',
          include: ['test/browser/**/*.test.ts'],
          sequence: { groupOrder: 2 },
          testTimeout: 60_000,
          hookTimeout: 120_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
