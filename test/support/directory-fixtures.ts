import { parseFlags, type CliCommand } from '../../src/cli/command.js';
import { commands } from '../../src/cli/commands/index.js';
import type { Person } from '../../src/modules/directory/people.js';
import type { TestApp } from './app.js';
import { given } from './given.js';
import type { PageAgent } from './page-agent.js';

/** A person with a live session and a browser-like agent carrying its cookie (given.signedIn). */
export const signedIn = (t: TestApp, input: { username?: string; name?: string } = {}): Promise<{ agent: PageAgent; person: Person }> => given.signedIn(t, input);

/** Runs a CLI command's run() as `gatehouse <name> <args>` would, against the test app's services. */
export async function runCommand(t: TestApp, name: string, args: string[]): Promise<Record<string, unknown>> {
  const command: CliCommand | undefined = commands.find((c) => c.name === name);
  if (!command) throw new Error(`no CLI command "${name}"`);
  const { flags } = parseFlags(args, command.flags);
  return command.run(t.services, flags);
}

/** The 303 target of a form post. */
export function location(response: { headers: Record<string, unknown> }): string {
  return String(response.headers['location']);
}

/** The CSRF token a page hands this agent, for posting to a form the page does not show (403/404 cases). */
export async function csrfFrom(agent: PageAgent, url = '/'): Promise<string> {
  const page = await agent.get(url);
  const token = /name="_csrf" value="([^"]+)"/.exec(page.body)?.[1];
  if (!token) throw new Error(`no CSRF token on ${url} (status ${page.statusCode})`);
  return token;
}
