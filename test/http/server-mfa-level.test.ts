import * as OTPAuth from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SECOND } from '../../src/core/clock.js';
import { Permission } from '../../src/core/permissions.js';
import { addMember } from '../../src/modules/directory/members.service.js';
import { createRole, updateRole } from '../../src/modules/directory/roles.service.js';
import { getServer, setServerMfaLevel } from '../../src/modules/directory/servers.service.js';
import { confirmTotp, secondFactorsChanged, startTotpEnrolment } from '../../src/modules/mfa/mfa.service.js';
import { presentGuild } from '../../src/modules/resources/resources.js';
import type { Person } from '../../src/modules/directory/people.js';
import { createTestApp, type TestApp } from '../support/app.js';
import type { PageAgent } from '../support/page-agent.js';
import { given } from '../support/given.js';
import { operatorActing, personActingOf } from '../support/acting.js';
import { insertPasskey } from '../../src/modules/accounts/passkeys.repository.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

/** Turns TOTP on for a person as Settings → Security does (H3's service), with a code from an OTP library. */
async function withSecondFactor(person: Person): Promise<void> {
  const acting = personActingOf(person.id, t.clock.now());
  const { secret } = await startTotpEnrolment(t.services, acting);
  const code = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret), digits: 6, period: 30, algorithm: 'SHA1' }).generate({ timestamp: t.clock.now() });
  await confirmTotp(t.services, acting, code);
  t.clock.advance(30 * SECOND);
}

/** A server whose @everyone only views and sends, a moderator holding Kick members, and a member to kick. */
async function moderatedServer() {
  const owner = await given.signedIn(t);
  const server = await given.server(t, { owner: owner.person, name: 'Guarded' });
  await updateRole(t.services, operatorActing(), server.id, server.everyoneRoleId, { permissions: Permission.VIEW_CHANNEL | Permission.SEND_MESSAGES });
  const kickers = await createRole(t.services, operatorActing(), server.id, { name: 'Kickers', permissions: Permission.KICK_MEMBERS });
  const moderator = await given.signedIn(t);
  await addMember(t.services, operatorActing(), server.id, moderator.person.id, [kickers.id]);
  const member = await given.person(t);
  await addMember(t.services, operatorActing(), server.id, member.id);
  return { owner, server, moderator, member };
}

async function setLevel(owner: { agent: PageAgent }, serverId: string, level: '0' | '1') {
  return owner.agent.submit(`/servers/${serverId}/settings`, `/servers/${serverId}/settings/mfa-level`, { level });
}

describe("a server's MFA level (issue #38 §4; Discord's mfa_level)", () => {
  it('the owner with a second factor turns it on from Server settings → Overview; the guild object shows mfa_level', async () => {
    const { owner, server } = await moderatedServer();
    const before = await owner.agent.get(`/servers/${server.id}/settings`);
    expect(before.body).toContain('Two-factor requirement for moderators');
    expect(presentGuild((await getServer(t.services, server.id))!).mfa_level).toBe(0);
    await withSecondFactor(owner.person);

    const res = await setLevel(owner, server.id, '1');
    expect(res.statusCode, res.body).toBe(303);
    expect(res.headers.location).toBe(`/servers/${server.id}/settings?done=mfa-level`);
    expect(presentGuild((await getServer(t.services, server.id))!).mfa_level).toBe(1);
    const audit = await t.services.db.selectFrom('audit_events').select('action').where('action', '=', 'server.updated').where('target_id', '=', server.id).execute();
    expect(audit).toHaveLength(1);
  });

  it('the owner without a second factor cannot turn it on, and is told why beside the form', async () => {
    const { owner, server } = await moderatedServer();
    const res = await setLevel(owner, server.id, '1');
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain('Turn on two-factor authentication for your own account');
    expect((await getServer(t.services, server.id))?.mfaLevel).toBe(0);
  });

  it('only the owner sets it: a member with Manage server and a second factor is refused (50013), and the form is not shown to them', async () => {
    const { server } = await moderatedServer();
    const admin = await given.signedIn(t);
    const managers = await createRole(t.services, operatorActing(), server.id, { name: 'Managers', permissions: Permission.MANAGE_SERVER });
    await addMember(t.services, operatorActing(), server.id, admin.person.id, [managers.id]);
    await withSecondFactor(admin.person);
    const page = await admin.agent.get(`/servers/${server.id}/settings`);
    expect(page.statusCode).toBe(200);
    expect(page.body).not.toContain('/settings/mfa-level');
    await expect(setServerMfaLevel(t.services, personActingOf(admin.person.id), server.id, '1')).rejects.toMatchObject({ status: 403, code: 50013 });
    expect((await getServer(t.services, server.id))?.mfaLevel).toBe(0);
  });

  it('refuses a level other than 0 or 1 and changes nothing', async () => {
    const { owner, server } = await moderatedServer();
    await withSecondFactor(owner.person);
    await expect(setServerMfaLevel(t.services, personActingOf(owner.person.id), server.id, '2')).rejects.toMatchObject({ status: 400, code: 50035 });
    expect((await getServer(t.services, server.id))?.mfaLevel).toBe(0);
  });

  it('when on, a moderator without 2FA cannot kick from the members page; with 2FA they can', async () => {
    const { owner, server, moderator, member } = await moderatedServer();
    await withSecondFactor(owner.person);
    expect((await setLevel(owner, server.id, '1')).statusCode).toBe(303);

    const refused = await moderator.agent.submit(`/servers/${server.id}/members/${member.id}/remove`, `/servers/${server.id}/members/${member.id}/remove`, {});
    expect(refused.statusCode).toBe(403);
    const still = await t.services.db.selectFrom('members').select('user_id').where('server_id', '=', server.id).where('user_id', '=', member.id).execute();
    expect(still).toHaveLength(1);

    await withSecondFactor(moderator.person);
    const kicked = await moderator.agent.submit(`/servers/${server.id}/members/${member.id}/remove`, `/servers/${server.id}/members/${member.id}/remove`, {});
    expect(kicked.statusCode, kicked.body).toBe(303);
    const gone = await t.services.db.selectFrom('members').select('user_id').where('server_id', '=', server.id).where('user_id', '=', member.id).execute();
    expect(gone).toHaveLength(0);
  });

  it('when off, the same moderator without 2FA kicks as before', async () => {
    const { server, moderator, member } = await moderatedServer();
    const kicked = await moderator.agent.submit(`/servers/${server.id}/members/${member.id}/remove`, `/servers/${server.id}/members/${member.id}/remove`, {});
    expect(kicked.statusCode, kicked.body).toBe(303);
  });

  it("when on, a bot whose owner has no 2FA loses Manage webhooks (403 50013); once the owner enrols it works", async () => {
    const { owner, server } = await moderatedServer();
    const botOwner = await given.person(t);
    const bot = await given.bot(t, { owner: botOwner, name: 'Deployer' });
    const hooks = await createRole(t.services, operatorActing(), server.id, { name: 'Hooks', permissions: Permission.MANAGE_WEBHOOKS | Permission.VIEW_CHANNEL });
    await addMember(t.services, operatorActing(), server.id, bot.botUserId, [hooks.id]);
    await withSecondFactor(owner.person);
    expect((await setLevel(owner, server.id, '1')).statusCode).toBe(303);
    const channelId = server.channels[0]?.id as string;
    const create = () => t.app.inject({ method: 'POST', url: `/api/v1/channels/${channelId}/webhooks`, headers: { ...bot.headers, 'content-type': 'application/json' }, payload: JSON.stringify({ name: 'CI' }) });

    const refused = await create();
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ code: 50013 });

    await withSecondFactor(botOwner);
    expect((await create()).statusCode).toBe(201);
  });

  it('the owner can always turn it off, second factor or not', async () => {
    const { owner, server } = await moderatedServer();
    await withSecondFactor(owner.person);
    expect((await setLevel(owner, server.id, '1')).statusCode).toBe(303);
    await t.services.db.deleteFrom('mfa_totp').where('user_id', '=', owner.person.id).execute();
    expect((await setLevel(owner, server.id, '0')).statusCode).toBe(303);
    expect((await getServer(t.services, server.id))?.mfaLevel).toBe(0);
  });

  it('an owner whose only second factor is a passkey may turn it on', async () => {
    const { owner, server } = await moderatedServer();
    await insertPasskey(t.services.db, { credentialId: `cred-${owner.person.id}`, userId: owner.person.id, name: 'Laptop', publicKey: 'AQID', signCount: 0, transports: ['internal'], createdAt: t.clock.now() });
    // As finishRegistration does in its transaction: users.mfa_enabled follows.
    await secondFactorsChanged(t.services.db, owner.person.id);
    await setServerMfaLevel(t.services, personActingOf(owner.person.id, t.clock.now()), server.id, '1');
    expect(presentGuild((await getServer(t.services, server.id))!).mfa_level).toBe(1);
  });

  describe("Discord's POST /api/v1/guilds/{id}/mfa", () => {
    it('refuses a bot that is a member but not the owner with 403 50013, and changes nothing', async () => {
      const { server } = await moderatedServer();
      const bot = await given.bot(t, { name: 'Not the owner' });
      await addMember(t.services, operatorActing(), server.id, bot.botUserId);
      const res = await t.app.inject({ method: 'POST', url: `/api/v1/guilds/${server.id}/mfa`, headers: { ...bot.headers, 'content-type': 'application/json' }, payload: { level: 1 } });
      expect(res.statusCode, res.body).toBe(403);
      expect(res.json()).toMatchObject({ code: 50013 });
      expect(presentGuild((await getServer(t.services, server.id))!).mfa_level).toBe(0);
    });

    it('answers 404 10004 for a server the bot is not in, and 401 without credentials', async () => {
      const { server } = await moderatedServer();
      const bot = await given.bot(t, { name: 'Outsider' });
      const res = await t.app.inject({ method: 'POST', url: `/api/v1/guilds/${server.id}/mfa`, headers: { ...bot.headers, 'content-type': 'application/json' }, payload: { level: 1 } });
      expect(res.statusCode, res.body).toBe(404);
      expect(res.json()).toMatchObject({ code: 10004 });
      const anonymous = await t.app.inject({ method: 'POST', url: `/api/v1/guilds/${server.id}/mfa`, headers: { 'content-type': 'application/json' }, payload: { level: 1 } });
      expect(anonymous.statusCode).toBe(401);
    });

    it('is described in the OpenAPI document with its body { level } and answer', async () => {
      const doc = (await t.app.inject({ method: 'GET', url: '/api/openapi.json' })).json() as { paths: Record<string, Record<string, { requestBody?: unknown; responses: Record<string, unknown> }>> };
      const operation = doc.paths['/api/v1/guilds/{guildId}/mfa']?.['post'];
      expect(operation).toBeDefined();
      expect(JSON.stringify(operation?.requestBody)).toContain('level');
      expect(Object.keys(operation?.responses ?? {})).toEqual(expect.arrayContaining(['200', '403', '404']));
    });
  });
});
