import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkExamples, docExamples } from '../../scripts/docs-check.mjs';
import { createTestApp, type TestApp } from '../support/app.js';

/**
 * Issue #36 §5: every JSON example in README.md and docs/ names the operation it shows and holds
 * to the schema the app documents for it (the OpenAPI document served at /api/openapi.json), so
 * an example cannot show a name the server never sends, nor leave out one it always sends.
 */
describe('the JSON examples of the docs', () => {
  let t: TestApp;
  let openapi: unknown;
  beforeAll(async () => {
    t = await createTestApp();
    await t.app.ready();
    openapi = t.app.swagger();
  });
  afterAll(async () => t.close());

  it('each name the operation it shows (untagged JSON is listed, apart from the allowed non-API JSON)', () => {
    expect(docExamples().findings).toEqual([]);
  });

  it('each match the documented schema of that operation, unknown names failing', () => {
    const { examples } = docExamples();
    expect(examples.length).toBeGreaterThan(10);
    expect(checkExamples(openapi, examples)).toEqual([]);
  });
});
