import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseFlags } from '../../src/cli/command.js';
import { oidcCommands } from '../../src/cli/commands/oidc.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { csrfTokenIn } from '../support/page-agent.js';
import { signedIn } from './authorize.fixtures.js';

/**
 * Issue #37 §2: OpenID Connect's audited changes — a signing-key rotation (by the operator, with
 * the new key's kid and never its key material) and a sign-out through the end-session endpoint.
 */
describe('the audit log of OpenID Connect', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t.close());

  it('`gatehouse keys rotate` records signing_key.rotated per algorithm, by the operator, naming the new kid and the ones it replaces', async () => {
    const command = oidcCommands.find((c) => c.name === 'keys rotate');
    // The first rotation makes the first generation; the second replaces it.
    await command?.run(t.services, parseFlags([], command.flags).flags);
    const before = await t.services.db.selectFrom('audit_events').select('id').where('action', '=', 'signing_key.rotated').execute();
    const result = (await command?.run(t.services, parseFlags([], command.flags).flags)) as { rotated: { alg: string; kid: string; retired: string[] }[] };
    const found = await t.services.db
      .selectFrom('audit_events')
      .select(['action', 'actor_kind', 'actor_id', 'target_id', 'address', 'options'])
      .where('action', '=', 'signing_key.rotated')
      .orderBy('id', 'asc')
      .execute();
    const rows = found.slice(before.length);
    expect(rows).toEqual(
      result.rotated.map((r) => ({
        action: 'signing_key.rotated',
        actor_kind: 'operator',
        actor_id: null,
        target_id: r.kid,
        address: null,
        options: JSON.stringify({ alg: r.alg, retired: r.retired.join(',') }),
      })),
    );
    expect(result.rotated.every((r) => r.retired.length === 1)).toBe(true);
    // Nothing of the keys themselves: the stored private parts appear in no audit row.
    const keys = await t.services.db.selectFrom('oidc_signing_keys').selectAll().execute();
    const text = JSON.stringify(rows);
    for (const key of keys) {
      for (const [column, value] of Object.entries(key)) if (column !== 'kid' && column !== 'alg' && typeof value === 'string' && value.length > 40) expect(text).not.toContain(value);
    }
  });

  it('signing out at the end-session endpoint records session.ended as signed-out, by the person, in the request', async () => {
    const { agent, person } = await signedIn(t);
    const page = await agent.get('/app/oauth2/logout');
    expect(page.statusCode).toBe(200);
    const res = await agent.postRaw('/app/oauth2/logout', { _csrf: csrfTokenIn(page.body) ?? '' }, { 'x-request-id': 'req-end-session' });
    expect(res.statusCode).toBe(200);
    const rows = await t.services.db.selectFrom('audit_events').select(['action', 'actor_kind', 'actor_id', 'subject_user_id', 'reason']).where('request_id', '=', 'req-end-session').execute();
    expect(rows.map((r) => ({ ...r, actor_id: String(r.actor_id), subject_user_id: String(r.subject_user_id) }))).toEqual([
      { action: 'session.ended', actor_kind: 'person', actor_id: person.id, subject_user_id: person.id, reason: 'signed-out' },
    ]);
    // The session is gone: the settings page sends the browser to sign in.
    expect((await agent.get('/settings/profile')).statusCode).toBe(303);
  });
});
