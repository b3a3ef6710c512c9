import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CliUsageError } from '../../src/cli/command.js';
import { parseSince } from '../../src/cli/commands/audit.js';
import type { Acting, Who } from '../../src/core/acting.js';
import { DAY, HOUR } from '../../src/core/clock.js';
import { ConfigError, loadConfig } from '../../src/config/config.js';
import type { DomainEvent } from '../../src/events/domain-events.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { runCommand } from '../support/directory-fixtures.js';
import { given } from '../support/given.js';

/**
 * Issue #37 §5: `gatehouse audit list`, the operator's instance-wide view (addresses and request
 * ids included), and GATEHOUSE_AUDIT_RETENTION_DAYS's validation.
 */

const NOW = Date.UTC(2026, 10, 28, 12, 0, 0);
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
  t.clock.set(NOW);
});
afterAll(async () => t.close());

function emit(acting: Acting<Who>, event: DomainEvent): Promise<void> {
  return t.services.bus.emitted(t.services.db, acting, event);
}

const at = (actor: Who, when: number, address = '198.51.100.7'): Acting<Who> => ({ actor, address, requestId: `req-${when}`, at: when, reason: null });

interface Listed {
  count: number;
  entries: Array<{ id: string; at: string; action: string; server_id: string | null; actor: { kind: string; id: string | null; username?: string }; application_id: string | null; address: string | null; request_id: string | null; reason: string | null; subject: { id: string; username?: string } | null }>;
}

describe('gatehouse audit list', () => {
  it('lists the whole instance newest first, with addresses, request ids and usernames; --person, --app, --server, --action, --since and --limit narrow it', async () => {
    const alice = await given.person(t, { username: `alice${Date.now().toString(36)}` });
    const client = await given.confidentialApp(t);
    const server = await given.server(t, { owner: alice });
    await emit(at({ kind: 'anonymous' }, NOW - 10 * DAY), { type: 'signin.failed', username: alice.username, userId: alice.id, why: 'wrong-password' });
    await emit(at({ kind: 'person', id: alice.id }, NOW - 2 * HOUR), { type: 'grant.created', applicationId: client.app.id, userId: alice.id, scopes: 'identify' });
    await emit(at({ kind: 'person', id: alice.id }, NOW - HOUR, '2001:db8::1'), { type: 'role.created', serverId: server.id, roleId: '6001', name: 'Mods', permissions: '0', color: 0 });

    // Making alice and her server is in her log too (person.created, server.created); these three come after.
    const mine = (await runCommand(t, 'audit list', ['--person', alice.username])) as unknown as Listed;
    expect(mine.entries.map((e) => e.action).slice(0, 3)).toEqual(['role.created', 'grant.created', 'signin.failed']);
    expect(mine.entries[0]).toMatchObject({ actor: { kind: 'person', id: alice.id, username: alice.username }, server_id: server.id, address: '2001:db8::1', request_id: `req-${NOW - HOUR}`, at: new Date(NOW - HOUR).toISOString() });
    expect(mine.entries[2]).toMatchObject({ actor: { kind: 'anonymous', id: null }, subject: { id: alice.id, username: alice.username }, reason: 'wrong-password', address: '198.51.100.7' });
    expect(mine.count).toBe(mine.entries.length);

    const byId = (await runCommand(t, 'audit list', ['--person', alice.id])) as unknown as Listed;
    expect(byId.entries.map((e) => e.id)).toEqual(mine.entries.map((e) => e.id));
    expect(((await runCommand(t, 'audit list', ['--app', client.app.id])) as unknown as Listed).entries.map((e) => e.action)).toEqual(['grant.created', 'app.created']);
    expect(((await runCommand(t, 'audit list', ['--server', server.id, '--action', 'role.created'])) as unknown as Listed).entries.map((e) => e.action)).toEqual(['role.created']);
    const sinceWeek = ((await runCommand(t, 'audit list', ['--person', alice.username, '--since', '7d'])) as unknown as Listed).entries.map((e) => e.action);
    expect(sinceWeek).toContain('grant.created');
    expect(sinceWeek).not.toContain('signin.failed');
    const sinceHour = ((await runCommand(t, 'audit list', ['--person', alice.username, '--since', new Date(NOW - 90 * 60_000).toISOString()])) as unknown as Listed).entries.map((e) => e.action);
    expect(sinceHour).toContain('role.created');
    expect(sinceHour).not.toContain('grant.created');
    expect(((await runCommand(t, 'audit list', ['--person', alice.username, '--limit', '1'])) as unknown as Listed).entries.map((e) => e.action)).toEqual(['role.created']);
  });

  it('--security keeps the security events (failed sign-ins, replays, failed client authentication, resets) and leaves the everyday changes out', async () => {
    const bob = await given.person(t, { username: `bob${Date.now().toString(36)}` });
    const client = await given.confidentialApp(t);
    const server = await given.server(t, { owner: bob });
    await emit(at({ kind: 'anonymous' }, NOW - 3 * HOUR), { type: 'client.auth_failed', applicationId: client.app.id, method: 'client_secret_basic' });
    await emit(at({ kind: 'person', id: bob.id }, NOW - 2 * HOUR), { type: 'role.created', serverId: server.id, roleId: '6002', name: 'Helpers', permissions: '0', color: 0 });
    await emit(at({ kind: 'person', id: bob.id }, NOW - HOUR), { type: 'client_secret.reset', applicationId: client.app.id });
    const listed = ((await runCommand(t, 'audit list', ['--security', '--app', client.app.id])) as unknown as Listed).entries.map((e) => e.action);
    expect(listed).toEqual(['client_secret.reset', 'client.auth_failed']);
    const everything = ((await runCommand(t, 'audit list', ['--security'])) as unknown as Listed).entries.map((e) => e.action);
    expect(everything).not.toContain('role.created');
    expect(everything).not.toContain('app.created');
    await expect(runCommand(t, 'audit list', ['--security', '--action', 'role.created'])).rejects.toBeInstanceOf(CliUsageError);
  });

  it('bad flags are usage errors (exit status 2): an unknown action, a bad --since, --limit or id, a person who does not exist', async () => {
    for (const args of [
      ['--action', 'role.exploded'],
      ['--since', 'last tuesday'],
      ['--since', '7w'],
      ['--limit', '0'],
      ['--limit', '1001'],
      ['--limit', 'many'],
      ['--app', 'my-app'],
      ['--server', '12a'],
      ['--person', 'no_such_person_here'],
    ]) {
      await expect(runCommand(t, 'audit list', args), args.join(' ')).rejects.toBeInstanceOf(CliUsageError);
    }
    await expect(runCommand(t, 'audit list', ['--colour', 'red'])).rejects.toBeInstanceOf(CliUsageError);
  });

  it('--since reads ISO dates and times and ages in minutes, hours and days', () => {
    expect(parseSince('2026-11-20', NOW)).toBe(Date.UTC(2026, 10, 20));
    expect(parseSince('2026-11-20T08:30:00Z', NOW)).toBe(Date.UTC(2026, 10, 20, 8, 30));
    expect(parseSince('24h', NOW)).toBe(NOW - DAY);
    expect(parseSince('30m', NOW)).toBe(NOW - 30 * 60_000);
    expect(parseSince('7d', NOW)).toBe(NOW - 7 * DAY);
  });
});

describe('GATEHOUSE_AUDIT_RETENTION_DAYS', () => {
  it('defaults to 90 days and takes a whole number of days from 1', () => {
    expect(loadConfig({}).auditRetentionDays).toBe(90);
    expect(loadConfig({ GATEHOUSE_AUDIT_RETENTION_DAYS: '365' }).auditRetentionDays).toBe(365);
  });

  it('refuses 0, negative numbers and garbage with a message naming the variable', () => {
    for (const value of ['0', '-5', 'ninety', '7.5', '40000']) {
      expect(() => loadConfig({ GATEHOUSE_AUDIT_RETENTION_DAYS: value }), value).toThrow(ConfigError);
      expect(() => loadConfig({ GATEHOUSE_AUDIT_RETENTION_DAYS: value }), value).toThrow(`GATEHOUSE_AUDIT_RETENTION_DAYS must be a whole number from 1 to 36500 (got "${value}")`);
    }
  });
});
