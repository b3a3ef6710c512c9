import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express, { type RequestHandler } from 'express';
import { verifyKeyMiddleware } from 'discord-interactions';
import { expect } from 'vitest';
import { Permission } from '../../src/core/permissions.js';
import { writeServerInstall } from '../../src/modules/applications/installs.service.js';
import type { TestApp } from '../support/app.js';
import { personActingOf } from '../support/acting.js';
import type { TestBot } from '../support/given.js';

/**
 * Issue #40 §2: `bot`'s app installed into a server with `applications.commands` (View channel and
 * Send messages granted; `commandsInServer: false` installs the bot alone), and `commands`
 * registered as its global commands (when given: without, the app keeps the ones it has).
 */
export async function installWithCommands(t: TestApp, input: { bot: TestBot; appName: string; installerId: string; serverId: string; commands?: unknown[]; commandsInServer?: boolean }): Promise<void> {
  await t.services.db.transaction().execute((trx) =>
    writeServerInstall(t.services, personActingOf(input.installerId), trx, {
      application: { id: input.bot.client.app.id, name: input.appName, botUserId: input.bot.botUserId },
      serverId: input.serverId,
      installerId: input.installerId,
      granted: Permission.VIEW_CHANNEL | Permission.SEND_MESSAGES,
      commands: input.commandsInServer ?? true,
    }),
  );
  if (input.commands === undefined) return;
  const put = await t.app.inject({ method: 'PUT', url: `/api/v1/applications/${input.bot.client.app.id}/commands`, headers: input.bot.headers, payload: input.commands });
  expect(put.statusCode).toBe(200);
}

/**
 * An app's interactions endpoint as app developers write it: express on a loopback port behind
 * discord-interactions' verifyKeyMiddleware (unmodified) with the app's verify_key, saved as the
 * app's interactions endpoint URL (which sends the two checks on save). Close the server after.
 */
export async function serveInteractions(t: TestApp, bot: TestBot, handle: RequestHandler): Promise<Server> {
  const me = await t.app.inject({ method: 'GET', url: '/api/v1/applications/@me', headers: bot.headers });
  const app = express();
  app.post('/interactions', verifyKeyMiddleware((me.json() as { verify_key: string }).verify_key), handle);
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/interactions`;
  const saved = await t.app.inject({ method: 'PATCH', url: '/api/v1/applications/@me', headers: bot.headers, payload: { interactions_endpoint_url: url } });
  expect(saved.statusCode).toBe(200);
  return server;
}

export interface ListedCommand {
  name: string;
  description: string;
  app: string;
  options: Array<{ name: string; description: string; required: boolean; kind: string; choices?: string[] }>;
}

/** The composer's `/` list data in a page (the textarea's data-commands); undefined when the page offers none. */
export function listedCommands(markup: string): ListedCommand[] | undefined {
  const raw = /data-commands="([^"]*)"/.exec(markup)?.[1];
  if (raw === undefined) return undefined;
  const unescaped = raw.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&#96;/g, '`').replace(/&amp;/g, '&');
  return JSON.parse(unescaped) as ListedCommand[];
}
