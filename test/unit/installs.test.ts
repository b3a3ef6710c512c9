import { describe, expect, it } from 'vitest';
import { ALL_PERMISSIONS, Permission as P } from '../../src/core/permissions.js';
import { describeRequestedPermissions, grantablePermissions, grantedPermissions, tickedPermissions } from '../../src/modules/applications/installs.js';

/** SPEC §5.6 rule 6, issue #4: what a bot install grants. */
describe('bot install permissions', () => {
  it('granted = requested ∩ held ∩ ticked, minus Administrator', () => {
    const requested = P.ADMINISTRATOR | P.BAN_MEMBERS | P.MANAGE_WEBHOOKS | P.SEND_MESSAGES;
    const held = P.MANAGE_SERVER | P.MANAGE_WEBHOOKS | P.SEND_MESSAGES;
    expect(grantablePermissions(requested, held)).toBe(P.MANAGE_WEBHOOKS | P.SEND_MESSAGES);
    expect(grantedPermissions(requested, held, P.MANAGE_WEBHOOKS | P.BAN_MEMBERS | P.ADMINISTRATOR)).toBe(P.MANAGE_WEBHOOKS);
  });

  it('an owner or Administrator (every bit held) still never grants Administrator', () => {
    expect(grantedPermissions(P.ADMINISTRATOR | P.KICK_MEMBERS, ALL_PERMISSIONS, ALL_PERMISSIONS)).toBe(P.KICK_MEMBERS);
    expect(grantedPermissions(P.ADMINISTRATOR, ALL_PERMISSIONS, ALL_PERMISSIONS)).toBe(0n);
  });

  it('the consent list puts what can be given first, then what the person lacks, then Administrator', () => {
    const list = describeRequestedPermissions(P.ADMINISTRATOR | P.BAN_MEMBERS | P.VIEW_CHANNEL, P.VIEW_CHANNEL);
    expect(list.map((p) => [p.name, p.notGrantable])).toEqual([
      ['VIEW_CHANNEL', undefined],
      ['BAN_MEMBERS', 'not-held'],
      ['ADMINISTRATOR', 'administrator'],
    ]);
    // No server chosen yet: only Administrator is known to be impossible.
    expect(describeRequestedPermissions(P.BAN_MEMBERS | P.ADMINISTRATOR, undefined).map((p) => p.notGrantable)).toEqual([undefined, 'administrator']);
  });

  it('ticked boxes are read by permission name; anything else is ignored', () => {
    expect(tickedPermissions(['SEND_MESSAGES', 'toString', '__proto__', 'NOPE', 42])).toBe(P.SEND_MESSAGES);
    expect(tickedPermissions('MANAGE_WEBHOOKS')).toBe(P.MANAGE_WEBHOOKS);
    expect(tickedPermissions(undefined)).toBe(0n);
  });
});
