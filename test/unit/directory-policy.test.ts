import { describe, expect, it } from 'vitest';
import { OPERATOR, person } from '../../src/core/actor.js';
import { ALL_PERMISSIONS, Permission } from '../../src/core/permissions.js';
import { ServerAction, can, check } from '../../src/modules/directory/policy.js';

const someone = person('1');

describe('directory policy (docs/permissions.md)', () => {
  it('a member needs every bit of an "all" action and one bit of an "any" action', () => {
    const held = Permission.KICK_MEMBERS;
    expect(can({ actor: someone, held }, ServerAction.manageRoles)).toBe(false);
    expect(can({ actor: someone, held }, ServerAction.removeMember)).toBe(true);
    expect(can({ actor: someone, held }, ServerAction.view)).toBe(true);
  });

  it('a non-member may do nothing, not even view, and is told the server does not exist', () => {
    expect(can({ actor: someone, held: undefined }, ServerAction.view)).toBe(false);
    expect(() => check({ actor: someone, held: undefined }, ServerAction.view)).toThrow(expect.objectContaining({ status: 404, code: 10004 }));
  });

  it('a member without the permission is told which one is missing', () => {
    expect(() => check({ actor: someone, held: 0n }, ServerAction.manageRoles)).toThrow(expect.objectContaining({ status: 403, code: 50013, message: expect.stringContaining('Manage roles') }));
  });

  it('the operator may do anything and acts with every permission', () => {
    expect(can({ actor: OPERATOR, held: undefined }, ServerAction.manageServer)).toBe(true);
    expect(check({ actor: OPERATOR, held: undefined }, ServerAction.manageServer)).toBe(ALL_PERMISSIONS);
  });
});
