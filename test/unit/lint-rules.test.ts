import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import { beforeAll, describe, expect, it } from 'vitest';

/**
 * The import rules of docs/architecture.md ("Layers and import rules") are lint rules
 * (eslint.config.js). Each is shown firing on a one-line import put in a real file's place (the
 * rest of src/ is read from disk, so a cycle closes through the real files), and each has a
 * nearby import that it lets through, so a rule that stopped working, or one that fired on
 * everything, fails here.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

let eslint: ESLint;
beforeAll(() => {
  eslint = new ESLint({ cwd: ROOT });
});

/** The messages of `rule` when `code` stands in for the file at `path` (relative to the repository). */
async function problems(path: string, code: string, rule: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: `${ROOT}${path}` });
  return (result?.messages ?? []).filter((m) => m.ruleId === rule).map((m) => m.message);
}

const zones = 'import-x/no-restricted-paths';
// A hang-catcher, not a duration (DESIGN §6): each lint resolves imports through the real tree,
// which on a busy 2-core machine took longer than the unit project's 5 s default.
const LINT = { timeout: 60_000 };

describe('lint: layers point one way (docs/architecture.md)', LINT, () => {
  it('a module that imports another module’s repository fails lint; its own repository and the other module’s service pass', async () => {
    const path = 'src/modules/webhooks/execute.service.ts';
    expect(await problems(path, "export { insertMessage } from '../messages/messages.repository.js';\n", zones)).toEqual([
      expect.stringContaining('through its service'),
    ]);
    expect(await problems(path, "export { findWebhook } from './webhooks.repository.js';\n", zones)).toEqual([]);
    expect(await problems(path, "export { storeMessage } from '../messages/messages.service.js';\n", zones)).toEqual([]);
  });

  it('an import cycle fails lint; the same file importing outside the cycle passes', async () => {
    // people.service.ts → people.repository.ts → people.ts: people.ts importing the service closes a loop.
    const path = 'src/modules/directory/people.ts';
    expect(await problems(path, "export { getPersonById } from './people.service.js';\n", 'import-x/no-cycle')).toEqual([expect.stringContaining('cycle')]);
    expect(await problems(path, "export { codePointLength } from './servers.js';\n", 'import-x/no-cycle')).toEqual([]);
  });

  it('web/ importing a feature module fails lint; web/ importing core/ passes', async () => {
    const path = 'src/web/layout.ts';
    expect(await problems(path, "export { getChannel } from '../modules/directory/channels.service.js';\n", zones)).toEqual([expect.stringContaining('web/')]);
    expect(await problems(path, "export type { Services } from '../services.js';\n", zones)).toEqual([expect.stringContaining('web/')]);
    expect(await problems(path, "export { hasForbiddenControl } from '../core/text.js';\n", zones)).toEqual([]);
  });

  it('http/ importing the services object or a module fails lint (its routes take what they read)', async () => {
    const path = 'src/http/operations.routes.ts';
    expect(await problems(path, "export type { Services } from '../services.js';\n", zones)).toEqual([expect.stringContaining('http/')]);
    expect(await problems(path, "export type { Services } from '../deps.js';\n", zones)).toEqual([expect.stringContaining('http/')]);
    expect(await problems(path, "export { getChannel } from '../modules/directory/channels.service.js';\n", zones)).toEqual([expect.stringContaining('http/')]);
    expect(await problems(path, "export type { Metrics } from './metrics.js';\n", zones)).toEqual([]);
  });

  it('a module importing services.ts fails lint; importing the deps.ts types passes', async () => {
    const path = 'src/modules/directory/channels.service.ts';
    expect(await problems(path, "export type { Deps } from '../../services.js';\n", zones)).toEqual([expect.stringContaining('deps.ts')]);
    expect(await problems(path, "export type { Deps } from '../../deps.js';\n", zones)).toEqual([]);
  });

  it('storage/ importing a module fails lint, except the *.table.ts types that storage/database.ts names', async () => {
    const path = 'src/storage/database.ts';
    expect(await problems(path, "export { getChannel } from '../modules/directory/channels.service.js';\n", zones)).toEqual([expect.stringContaining('storage/')]);
    expect(await problems(path, "export type { UsersTable } from '../modules/directory/directory.table.js';\n", zones)).toEqual([]);
  });

  it('core/ importing the rest of src/ fails lint', async () => {
    expect(await problems('src/core/clock.ts', "export type { Deps } from '../deps.js';\n", zones)).toEqual([expect.stringContaining('core/')]);
  });

  it('deps.ts holds types only', async () => {
    const rule = 'no-restricted-syntax';
    expect(await problems('src/deps.ts', "import { systemClock } from './core/clock.js';\nexport const clock = systemClock;\n", rule)).toHaveLength(2);
    expect(await problems('src/deps.ts', "import type { Clock } from './core/clock.js';\nexport interface Only { clock: Clock }\n", rule)).toEqual([]);
  });
});

describe('lint: services do not branch on the database (issue #37 §4)', LINT, () => {
  const rule = 'no-restricted-syntax';
  const path = 'src/modules/webhooks/execute.service.ts';
  it('a service naming deps.dialect or deps.coherence, or destructuring them, fails lint', async () => {
    const header = "import type { Deps } from '../../deps.js';\n";
    expect(await problems(path, `${header}export const f = (deps: Deps) => deps.dialect === 'postgres';\n`, rule)).toEqual([expect.stringContaining('repository function chooses')]);
    expect(await problems(path, `${header}export const f = (deps: Deps) => deps.coherence !== undefined;\n`, rule)).toEqual([expect.stringContaining('repository function chooses')]);
    expect(await problems(path, `${header}export const f = ({ dialect }: Deps) => dialect;\n`, rule)).toEqual([expect.stringContaining('repository function chooses')]);
  });

  it('a service passing deps.db to a repository passes, and a repository may ask its dialect; process.env stays refused in services', async () => {
    expect(await problems(path, "import type { Deps } from '../../deps.js';\nexport const f = (deps: Deps) => deps.db;\n", rule)).toEqual([]);
    expect(await problems('src/modules/webhooks/execute.repository.ts', "export const f = (deps: { dialect: string }) => deps.dialect;\n", rule)).toEqual([]);
    expect(await problems(path, 'export const f = () => process.env.X;\n', rule)).toEqual([expect.stringContaining('process.env')]);
  });

  it('no service in the tree names them (the rule is enforced on every service, oauth/ included)', () => {
    const services = readdirSync(`${ROOT}src/modules`, { recursive: true, encoding: 'utf8' })
      .filter((file) => file.endsWith('.service.ts'))
      .map((file) => `src/modules/${file}`);
    expect(services.length).toBeGreaterThan(10);
    const found = services.filter((file) => /\.(?:dialect|coherence)\b|\{[^}]*\b(?:dialect|coherence)\b[^}]*\}\s*[:=]/.test(readFileSync(`${ROOT}${file}`, 'utf8')));
    expect(found).toEqual([]);
  });
});

describe('lint: who acts is never defaulted (issue #37 §1)', LINT, () => {
  const rule = 'gatehouse/acting-required';
  const header = "import type { Acting } from '../../core/acting.js';\nimport type { Actor, PersonActor } from '../../core/actor.js';\nimport { OPERATOR } from '../../core/actor.js';\nimport type { Deps } from '../../deps.js';\n";
  const refused = [expect.stringContaining('never defaulted')];

  it('a parameter typed Actor, PersonActor or Acting<…> with a default value fails lint, in a service or anywhere in src/', async () => {
    const path = 'src/modules/directory/members.service.ts';
    expect(await problems(path, `${header}export function f(deps: Deps, id: string, actor: Actor = OPERATOR) { return [deps, id, actor]; }\n`, rule)).toEqual(refused);
    expect(await problems(path, `${header}export const f = (deps: Deps, who: PersonActor = { kind: 'person', id: '1' }) => [deps, who];\n`, rule)).toEqual(refused);
    expect(await problems(path, `${header}export async function f(deps: Deps, acting: Acting<Actor> = { actor: OPERATOR, address: null, requestId: null, at: 0, reason: null }) { return [deps, acting]; }\n`, rule)).toEqual(refused);
    expect(await problems(path, `${header}export function f(deps: Deps, actor: Actor | undefined = undefined) { return [deps, actor]; }\n`, rule)).toEqual(refused);
    expect(await problems('src/http/acting.ts', `${header}export function f(acting: Acting = { actor: OPERATOR, address: null, requestId: null, at: 0, reason: null }) { return acting; }\n`, rule)).toEqual(refused);
  });

  it('an optional Actor or Acting parameter, or a destructured actor with a default, fails lint too (a call without one would compile)', async () => {
    const path = 'src/modules/directory/members.service.ts';
    expect(await problems(path, `${header}export function f(deps: Deps, actor?: Actor) { return [deps, actor]; }\n`, rule)).toEqual(refused);
    expect(await problems(path, `${header}export function f(deps: Deps, { actor = OPERATOR }: { actor?: Actor }) { return [deps, actor]; }\n`, rule)).toEqual(refused);
  });

  it('a required Acting<…> or Actor parameter passes, and so does a default on any other parameter', async () => {
    const path = 'src/modules/directory/members.service.ts';
    expect(await problems(path, `${header}export function f(deps: Deps, acting: Acting<PersonActor>, roleIds: readonly string[] = []) { return [deps, acting, roleIds]; }\n`, rule)).toEqual([]);
    expect(await problems(path, `${header}export const f = (actor: Actor, limit = 10) => [actor, limit];\n`, rule)).toEqual([]);
    expect(await problems(path, `${header}export const f = (actors: Actor[] = []) => actors;\n`, rule)).toEqual([]);
  });
});

describe('lint: services emit domain events, they do not publish live events by hand (issue #37 §2)', LINT, () => {
  const rule = 'no-restricted-syntax';
  const path = 'src/modules/webhooks/execute.service.ts';
  const header = "import type { Deps } from '../../deps.js';\n";

  it('deps.events.publish(…) or a destructured events.publish(…) in a service fails lint', async () => {
    expect(await problems(path, `${header}export const f = (deps: Deps) => deps.events.publish({ type: 'message_create', channelId: '1', messageId: '2' });\n`, rule)).toEqual([expect.stringContaining('Emit the domain event')]);
    expect(await problems(path, `${header}export const f = ({ events }: Deps) => events.publish({ type: 'message_create', channelId: '1', messageId: '2' });\n`, rule)).toEqual([expect.stringContaining('Emit the domain event')]);
  });

  it('announceAccessChange in a service fails lint (its import and its call)', async () => {
    const code = `${header}import { announceAccessChange } from '../../realtime/channel-events.js';\nexport const f = (deps: Deps) => announceAccessChange(deps.events, '1');\n`;
    expect(await problems('src/modules/directory/members.service.ts', code, rule)).toEqual([expect.stringContaining('access.changed'), expect.stringContaining('access.changed')]);
  });

  it('emitting the domain event passes, and realtime/ may still publish (it is the subscriber)', async () => {
    const emit = `${header}import type { Acting } from '../../core/acting.js';\nimport { emitted } from '../../events/event-bus.js';\nexport const f = (deps: Deps, acting: Acting) => emitted(deps, acting, { type: 'message.created', serverId: null, channelId: '1', messageId: '2' });\n`;
    expect(await problems(path, emit, rule)).toEqual([]);
    expect(await problems('src/realtime/live-subscriber.ts', "export const f = (events: { publish(e: unknown): void }) => events.publish({});\n", rule)).toEqual([]);
  });

  it('no service in the tree publishes by hand or defaults who acts', async () => {
    const services = readdirSync(`${ROOT}src/modules`, { recursive: true, encoding: 'utf8' })
      .filter((file) => file.endsWith('.service.ts'))
      .map((file) => `${ROOT}src/modules/${file}`);
    expect(services.length).toBeGreaterThan(10);
    const results = await eslint.lintFiles(services);
    const found = results.flatMap((r) =>
      r.messages
        .filter((m) => m.ruleId === 'gatehouse/acting-required' || (m.ruleId === 'no-restricted-syntax' && /domain event|access\.changed/.test(m.message)))
        .map((m) => `${r.filePath.slice(ROOT.length)}:${m.line} ${m.message}`),
    );
    expect(found).toEqual([]);
  });
});
