import { defineConfig } from 'vitest/config';

// Projects are named for what they hold; `npm test` runs them all (see README "Tests").
// Projects with the same groupOrder share the cores; a later group starts when the earlier one ends.
export default defineConfig({
  test: {
    projects: [
      {
        // Pure functions only: no server, no database, no network. Stays under 20 s.
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          sequence: { groupOrder: 0 },
        },
      },
      {
        // The app through app.inject() and the storage layer, each file on its own database.
        // Module import (Fastify and all of src/) dominated this project's wall time, so files share
        // worker threads and their module graph (isolate: false): every file still builds its own
        // app, services and database in beforeEach/beforeAll, so no state crosses files.
        test: {
          name: 'http',
          include: ['test/http/**/*.test.ts', 'test/storage/**/*.test.ts'],
          pool: 'threads',
          isolate: false,
          sequence: { groupOrder: 0 },
          testTimeout: 30_000,
          hookTimeout: 60_000,
        },
      },
      {
        // Real clients (discord.js, openid-client, Authlib, …) against the built server in dist/.
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          sequence: { groupOrder: 0 },
          testTimeout: 30_000,
          hookTimeout: 60_000,
        },
      },
      {
        // Issue #7: crash, race, scale-out, fault, fuzz and security tests. They start real server
        // processes (from dist/) and dedicated databases, so they run one file at a time, after the
        // projects above: the timing-sensitive ceilings (a restart that never serves) never share the cores.
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
