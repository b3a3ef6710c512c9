import { actingAs, cliActing } from '../../core/acting.js';
import { person as personActor } from '../../core/actor.js';
import { ApiError } from '../../core/errors.js';
import { Permission } from '../../core/permissions.js';
import { registerPerson } from '../../modules/accounts/accounts.service.js';
import { createChannel, getChannels } from '../../modules/directory/channels.service.js';
import { addMember, findPersonToAdd } from '../../modules/directory/members.service.js';
import type { Person } from '../../modules/directory/people.js';
import { createRole, getRoles } from '../../modules/directory/roles.service.js';
import { createServer, findOwnedServerByName } from '../../modules/directory/servers.service.js';
import { postMessage } from '../../modules/messages/messages.service.js';
import type { Services } from '../../deps.js';
import type { CliCommand } from '../command.js';

export const DEMO_SERVER_NAME = 'Demo Server';
const DEMO_PEOPLE = [
  { username: 'alice', name: 'Alice', role: 'owner' },
  { username: 'bob', name: 'Bob', role: 'Moderators' },
  { username: 'carol', name: 'Carol', role: 'member' },
] as const;

/** Moderators can run the server and its webhooks and tidy messages, but are not Administrators and cannot ban. */
export const MODERATOR_PERMISSIONS = Permission.MANAGE_SERVER | Permission.MANAGE_WEBHOOKS | Permission.MANAGE_MESSAGES;

async function existing(services: Services, username: string): Promise<Person | undefined> {
  try {
    return await findPersonToAdd(services, username);
  } catch (error) {
    if (error instanceof ApiError) return undefined;
    throw error;
  }
}

/** A password to print once: random, so a demo left on a reachable machine is not an open door. */
function demoPassword(services: Services): string {
  return `demo-${services.random.bytes(9).toString('base64url')}`;
}

function channelUrl(services: Services, id: string): string {
  return `${services.config.baseUrl.replace(/\/+$/, '')}/channels/${id}`;
}

/** `gatehouse seed-demo`: sample people, a server with roles, channels and messages (issue #2 §8). */
export const seedCommands: CliCommand[] = [
  {
    name: 'seed-demo',
    summary: 'create demo people (alice, bob, carol) and a "Demo Server" to try every flow',
    flags: {},
    async run(services) {
      const alice = await existing(services, 'alice');
      const demo = alice ? await findOwnedServerByName(services, alice.id, DEMO_SERVER_NAME) : undefined;
      if (alice && demo) {
        // Safe to run twice: the demo stays as it is; passwords were shown on the first run only.
        const channels = await getChannels(services, demo.id);
        return {
          created: false,
          // Issue #36 §4: name only commands that exist (issue #38 §3 added the operator's password commands).
          message:
            'The demo already exists: sign in as alice, bob or carol with the passwords printed when it was created; they are not shown again. To choose new ones, run "gatehouse people set-password --username alice --password …" (or "gatehouse people reset-password --username alice" for a one-time link). For a new demo, run seed-demo with DATABASE_URL naming a new database.',
          server: { id: demo.id, name: demo.name },
          channels: channels.map((c) => ({ id: c.id, name: c.name, url: channelUrl(services, c.id) })),
          people: DEMO_PEOPLE.map((p) => ({ username: p.username, role: p.role })),
        };
      }
      for (const p of DEMO_PEOPLE) {
        if (await existing(services, p.username)) {
          throw new Error(`the username "${p.username}" is taken by someone else; seed-demo needs alice, bob and carol to be free`);
        }
      }

      const people: Array<{ person: Person; password: string; role: string }> = [];
      for (const p of DEMO_PEOPLE) {
        const password = demoPassword(services);
        const person = await registerPerson(services, cliActing(services.clock), { username: p.username, name: p.name, password, email: `${p.username}@example.com` });
        people.push({ person, password, role: p.role });
      }
      const [owner, bob, carol] = people.map((p) => p.person) as [Person, Person, Person];

      const server = await createServer(services, cliActing(services.clock), { ownerId: owner.id, name: DEMO_SERVER_NAME });
      const moderators = await createRole(services, cliActing(services.clock), server.id, { name: 'Moderators', permissions: MODERATOR_PERMISSIONS, color: 0x2e8b57 });
      await addMember(services, cliActing(services.clock), server.id, bob.id, [moderators.id]);
      await addMember(services, cliActing(services.clock), server.id, carol.id, []);

      const general = server.channels[0];
      const announcements = await createChannel(services, cliActing(services.clock), server.id, { name: 'announcements', topic: 'News about the server. Webhooks post here.' });
      const dev = await createChannel(services, cliActing(services.clock), server.id, { name: 'dev', topic: 'Build notifications and bot experiments.' });
      if (general) {
        await postMessage(services, actingAs(cliActing(services.clock), personActor(owner.id)), general.id, 'Welcome to the demo server! Try posting a message, creating a channel, or adding an app.');
        await postMessage(services, actingAs(cliActing(services.clock), personActor(bob.id)), general.id, 'Hi all, I moderate here. Ask me if you need a webhook for your project.');
        await postMessage(services, actingAs(cliActing(services.clock), personActor(carol.id)), general.id, 'Hello! 👋');
      }
      await postMessage(services, actingAs(cliActing(services.clock), personActor(owner.id)), announcements.id, 'This channel is for announcements. Moderators can create webhooks to post here automatically.');
      await postMessage(services, actingAs(cliActing(services.clock), personActor(bob.id)), dev.id, 'Point your CI at a webhook in this channel to see build results.');

      const roles = await getRoles(services, server.id);
      const channels = await getChannels(services, server.id);
      return {
        created: true,
        message: 'Demo created. Sign in at the URL below as any of these people; the passwords are shown only now.',
        sign_in_url: `${services.config.baseUrl.replace(/\/+$/, '')}/login`,
        server: { id: server.id, name: server.name, owner_id: server.ownerId },
        roles: roles.map((r) => ({ id: r.id, name: r.name, permissions: r.permissions.toString() })),
        channels: channels.map((c) => ({ id: c.id, name: c.name, url: channelUrl(services, c.id) })),
        people: people.map((p) => ({ id: p.person.id, username: p.person.username, password: p.password, role: p.role })),
      };
    },
  },
];
