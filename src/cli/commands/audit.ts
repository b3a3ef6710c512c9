import { DAY, HOUR, MINUTE } from '../../core/clock.js';
import { isSnowflake } from '../../core/snowflake.js';
import { AUDITED_EVENTS, SECURITY_EVENTS, type AuditRow } from '../../modules/audit/audit.js';
import { findAuditPerson, readInstanceAuditLog } from '../../modules/audit/audit.service.js';
import { CliUsageError, type CliCommand } from '../command.js';

/** `gatehouse audit …` (issue #37 §5; docs/audit-log.md): the operator reads the whole instance's log. */

const LIMIT_DEFAULT = 50;
const LIMIT_MAX = 1000;
const UNITS: Record<string, number> = { m: MINUTE, h: HOUR, d: DAY };

/** `--since`: an ISO date or time (2026-11-20, 2026-11-20T08:00Z), or an age such as 7d, 24h, 30m. */
export function parseSince(text: string, now: number): number {
  const age = /^(\d{1,6})([mhd])$/.exec(text.trim());
  if (age) return now - Number(age[1]) * (UNITS[age[2] as string] as number);
  if (/^\d{4}-\d{2}-\d{2}([T ][0-9:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(text.trim())) {
    const at = Date.parse(text.trim());
    if (!Number.isNaN(at)) return at;
  }
  throw new CliUsageError(`--since must be an ISO date (2026-11-20, 2026-11-20T08:00Z) or an age such as 7d, 24h or 30m (got "${text}")`);
}

function present(row: AuditRow, usernames: ReadonlyMap<string, string>): Record<string, unknown> {
  const parse = (text: string | null): unknown => (text === null ? null : (JSON.parse(text) as unknown));
  return {
    id: row.id,
    at: new Date(row.createdAt).toISOString(),
    action: row.action,
    action_type: row.actionType,
    server_id: row.serverId,
    actor: { kind: row.actorKind, id: row.actorId, ...(row.actorId !== null && usernames.has(row.actorId) ? { username: usernames.get(row.actorId) } : {}) },
    application_id: row.applicationId,
    target_id: row.targetId,
    subject: row.subjectUserId === null ? null : { id: row.subjectUserId, ...(usernames.has(row.subjectUserId) ? { username: usernames.get(row.subjectUserId) } : {}) },
    // The operator's view: where each change came from (docs/audit-log.md "Who sees what").
    address: row.address,
    request_id: row.requestId,
    reason: row.reason,
    changes: parse(row.changes),
    options: parse(row.options),
  };
}

export const auditCommands: CliCommand[] = [
  {
    name: 'audit list',
    summary: 'list audit log entries of the whole instance, newest first (addresses and request ids included)',
    flags: {
      person: { description: 'entries done by or about this person (username or id)' },
      app: { description: 'entries of this application (its client id)' },
      since: { description: 'only entries from this ISO date or time, or this long ago (7d, 24h, 30m)' },
      server: { description: 'entries of this server (its id)' },
      action: { description: `one action, e.g. signin.failed, role.created (one of: ${AUDITED_EVENTS.join(', ')})` },
      limit: { description: `how many entries, 1–${LIMIT_MAX} (default ${LIMIT_DEFAULT})` },
      security: { description: `only the instance's security events (${SECURITY_EVENTS.join(', ')})`, boolean: true },
    },
    async run(services, flags) {
      const limitText = flags.string('limit');
      const limit = limitText === undefined ? LIMIT_DEFAULT : Number(limitText);
      if (limitText !== undefined && (!/^\d+$/.test(limitText) || limit < 1 || limit > LIMIT_MAX)) throw new CliUsageError(`--limit must be a whole number from 1 to ${LIMIT_MAX} (got "${limitText}")`);
      const app = flags.string('app');
      if (app !== undefined && !isSnowflake(app)) throw new CliUsageError(`--app must be a client id (digits; got "${app}")`);
      const server = flags.string('server');
      if (server !== undefined && !isSnowflake(server)) throw new CliUsageError(`--server must be a server id (digits; got "${server}")`);
      const action = flags.string('action');
      if (action !== undefined && !(AUDITED_EVENTS as readonly string[]).includes(action)) throw new CliUsageError(`--action must be one of ${AUDITED_EVENTS.join(', ')} (got "${action}")`);
      // Issue #37 §5: the operator's view of attacks and credential resets, without the servers' everyday changes.
      if (action !== undefined && flags.bool('security')) throw new CliUsageError('--action and --security cannot be combined');
      const actions = action !== undefined ? [action] : flags.bool('security') ? [...SECURITY_EVENTS] : undefined;
      const sinceText = flags.string('since');
      const since = sinceText === undefined ? undefined : parseSince(sinceText, services.clock.now());
      const personText = flags.string('person');
      const person = personText === undefined ? undefined : await findAuditPerson(services, personText);
      if (personText !== undefined && person === undefined) throw new CliUsageError(`--person: no person with the username or id "${personText}"`);
      const { entries, usernames } = await readInstanceAuditLog(services, {
        limit,
        ...(person ? { personId: person.id } : {}),
        ...(app !== undefined ? { applicationId: app } : {}),
        ...(server !== undefined ? { serverId: server } : {}),
        ...(actions !== undefined ? { actions } : {}),
        ...(since !== undefined ? { since } : {}),
      });
      return { count: entries.length, entries: entries.map((row) => present(row, usernames)) };
    },
  },
];
