import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DAY, MINUTE } from '../../src/core/clock.js';
import { addMember, setMemberRoles } from '../../src/modules/directory/members.service.js';
import { createRole } from '../../src/modules/directory/roles.service.js';
import { createServer } from '../../src/modules/directory/servers.service.js';
import { createChannel } from '../../src/modules/directory/channels.service.js';
import { postMessage } from '../../src/modules/messages/messages.service.js';
import { deleteMessage } from '../../src/modules/messages/message-actions.service.js';
import { person } from '../../src/core/actor.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { signedIn } from '../support/directory-fixtures.js';
import { actingOf, operatorActing, personActingOf } from '../support/acting.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

async function channelOf(name: string) {
  const owner = await signedIn(t, { name });
  const server = await createServer(t.services, personActingOf(owner.person.id), { name: `${name}'s place` });
  return { owner, server, channelId: server.channels[0]?.id as string };
}

/** The ids of the messages a page shows, in page order. */
const shownIds = (body: string): string[] => [...body.matchAll(/<li class="message[^"]*" id="m(\d+)"/g)].map((m) => m[1] as string);
const olderLink = (body: string): string | undefined => /<a href="([^"]+)" rel="prev" data-older>/.exec(body)?.[1]?.replace(/&amp;/g, '&');

describe('channel history (issue #24 "Reading")', () => {
  it('a channel opens at its newest 50 messages, and "Load older messages" pages back through 500 to the first', async () => {
    const { owner, channelId } = await channelOf('Pat Pager');
    const posted: string[] = [];
    for (let i = 1; i <= 500; i += 1) posted.push((await postMessage(t.services, actingOf(person(owner.person.id)), channelId, `history ${i}`)).id);

    const first = await owner.agent.get(`/channels/${channelId}`);
    expect(first.statusCode).toBe(200);
    expect(shownIds(first.body)).toEqual(posted.slice(450));
    expect(first.body).toContain(`data-live="/channels/${channelId}/events"`);
    expect(first.body).not.toContain('Jump to present</a></p>');

    const seen = shownIds(first.body);
    let body = first.body;
    let pages = 1;
    for (let link = olderLink(body); link; link = olderLink(body)) {
      expect(link).toBe(`/channels/${channelId}?before=${seen[0]}`);
      const res = await owner.agent.get(link);
      expect(res.statusCode).toBe(200);
      body = res.body;
      // An older page: no live updates (they belong to the present), and a way back to it.
      expect(body).not.toContain('data-live=');
      expect(body).toContain(`<a href="/channels/${channelId}#post" data-present>`);
      seen.unshift(...shownIds(body));
      pages += 1;
    }
    expect(pages).toBe(10);
    expect(seen).toEqual(posted);
    expect(body).toContain('This is the start of #general.');
    expect(body).toContain('history 1<');
  });

  it('a ?before= that is not a message id is refused with 400, never a server error', async () => {
    const { owner, channelId } = await channelOf('Jun Junk');
    await postMessage(t.services, actingOf(person(owner.person.id)), channelId, 'hello');
    for (const junk of ['abc', '-1', '1.5', '99999999999999999999999', '%00', '', `${'9'.repeat(64)}`, '18446744073709551616']) {
      const res = await owner.agent.get(`/channels/${channelId}?before=${junk}`);
      expect(res.statusCode, junk).toBe(400);
      expect(res.headers['content-type'], junk).toMatch(/^text\/html/);
    }
    // Two values, or a very long one, are refused by the schema the same way.
    expect((await owner.agent.get(`/channels/${channelId}?before=1&before=2`)).statusCode).toBeLessThan(500);
    expect((await owner.agent.get(`/channels/${channelId}?before=${'1'.repeat(5000)}`)).statusCode).toBe(400);
    // A valid id older than everything: an empty page that still links to the present.
    const empty = await owner.agent.get(`/channels/${channelId}?before=1`);
    expect(empty.statusCode).toBe(200);
    expect(shownIds(empty.body)).toEqual([]);
    expect(empty.body).toContain('Jump to present');
  });

  it('groups consecutive messages of one author within 7 minutes, separates days, and shows relative times with the exact time', async () => {
    const { owner, server, channelId } = await channelOf('Gia Grouper');
    const other = await signedIn(t, { name: 'Oren Other' });
    await addMember(t.services, operatorActing(), server.id, other.person.id);
    const start = Date.UTC(2026, 10, 24, 22, 0);
    t.clock.set(start);
    const say = async (who: string, text: string, at: number) => {
      t.clock.set(at);
      return postMessage(t.services, actingOf(person(who)), channelId, text);
    };
    const a1 = await say(owner.person.id, 'a1', start);
    const a2 = await say(owner.person.id, 'a2', start + 2 * MINUTE);
    const a3 = await say(owner.person.id, 'a3', start + 9 * MINUTE + 1);
    const b1 = await say(other.person.id, 'b1', start + 10 * MINUTE);
    const a4 = await say(owner.person.id, 'a4', start + 11 * MINUTE);
    // Next day (UTC), within 7 minutes of nothing: a new separator, never grouped across it.
    const a5 = await say(owner.person.id, 'a5', start + 2 * DAY + 30 * MINUTE);
    const a6 = await say(owner.person.id, 'a6', start + 2 * DAY + 33 * MINUTE);
    t.clock.set(start + 2 * DAY + 35 * MINUTE);

    const body = (await owner.agent.get(`/channels/${channelId}`)).body;
    const classOf = (id: string) => new RegExp(`<li class="([^"]+)" id="m${id}"`).exec(body)?.[1];
    expect(classOf(a1.id)).toBe('message');
    expect(classOf(a2.id)).toBe('message grouped');
    expect(classOf(a3.id)).toBe('message');
    expect(classOf(b1.id)).toBe('message');
    expect(classOf(a4.id)).toBe('message');
    expect(classOf(a5.id)).toBe('message');
    expect(classOf(a6.id)).toBe('message grouped');
    // Day separators: the first day by its date (two days ago), then today.
    const separators = [...body.matchAll(/<li class="day-separator"><span>([^<]+)<\/span>/g)].map((m) => m[1]);
    expect(separators).toEqual(['2026-11-24', 'Today']);
    // Relative times, the exact instant in the title, focusable.
    expect(body).toContain(`<time datetime="${new Date(start + 2 * DAY + 30 * MINUTE).toISOString()}" title="2026-11-26 22:30:00 UTC" tabindex="0" data-relative>5 minutes ago</time>`);
    expect(body).toContain('>2026-11-24 22:00</time>');
    // A grouped message keeps its author for screen readers.
    expect(body).toMatch(new RegExp(`id="m${a2.id}"[\\s\\S]*?<span class="visually-hidden">Gia Grouper</span>`));
    // The reader's own messages carry their Edit and Delete actions, grouped or not.
    for (const id of [a1.id, a2.id]) expect(body).toMatch(new RegExp(`id="m${id}"(?:(?!</li>)[\\s\\S])*aria-label="Edit message"(?:(?!</li>)[\\s\\S])*aria-label="Delete message"`));
  });

  it('unread state per person: a "New messages" marker and a bold channel for A after B posts, cleared once A opens it', async () => {
    const { owner: a, server, channelId: general } = await channelOf('Ada Reader');
    const b = await signedIn(t, { name: 'Bo Writer' });
    await addMember(t.services, operatorActing(), server.id, b.person.id);
    const news = await createChannel(t.services, operatorActing(), server.id, { name: 'news' });
    const unreadLink = (id: string) => new RegExp(`<a href="/channels/${id}" class="(?:active )?unread"[^>]*># [a-z]+<span class="visually-hidden"> \\(unread\\)</span></a>`);

    const mine = await postMessage(t.services, actingOf(person(a.person.id)), general, 'my own words');
    await a.agent.get(`/channels/${general}`);
    // A's own messages never make a channel unread for A.
    expect((await a.agent.get(`/channels/${news.id}`)).body).not.toMatch(unreadLink(general));

    const b1 = await postMessage(t.services, actingOf(person(b.person.id)), general, 'news from Bo');
    await postMessage(t.services, actingOf(person(b.person.id)), general, 'and more');
    const elsewhere = await a.agent.get(`/channels/${news.id}`);
    expect(elsewhere.body).toMatch(unreadLink(general));
    expect(elsewhere.body).not.toMatch(unreadLink(news.id));
    // B has read nothing of general: bold for B too, and B's marker is independent of A's.
    expect((await b.agent.get(`/channels/${news.id}`)).body).toMatch(unreadLink(general));

    const opened = await a.agent.get(`/channels/${general}`);
    expect(opened.body).toMatch(new RegExp(`<li class="new-messages" id="new-messages"><span>New messages</span></li>\\s*<li class="message" id="m${b1.id}"`));
    expect(opened.body.indexOf(`id="m${mine.id}"`)).toBeLessThan(opened.body.indexOf('id="new-messages"'));
    expect(opened.body).not.toMatch(unreadLink(general));

    const again = await a.agent.get(`/channels/${general}`);
    expect(again.body).not.toContain('id="new-messages"');
    expect((await a.agent.get(`/channels/${news.id}`)).body).not.toMatch(unreadLink(general));
    // An older page read later does not move the mark back.
    await a.agent.get(`/channels/${general}?before=${b1.id}`);
    expect((await a.agent.get(`/channels/${news.id}`)).body).not.toMatch(unreadLink(general));
  });

  it('POST /channels/:id/read (the page script, for messages that arrive while it is open) moves the mark; junk is a 4xx', async () => {
    const { owner: a, server, channelId: general } = await channelOf('Rae Live');
    const b = await signedIn(t, { name: 'Sol Sender' });
    await addMember(t.services, operatorActing(), server.id, b.person.id);
    const news = await createChannel(t.services, operatorActing(), server.id, { name: 'news' });
    const unread = async () => /class="unread"/.test((await a.agent.get(`/channels/${news.id}`)).body);
    await a.agent.get(`/channels/${general}`);
    await postMessage(t.services, actingOf(person(b.person.id)), general, 'one');
    const two = await postMessage(t.services, actingOf(person(b.person.id)), general, 'two');
    const three = await postMessage(t.services, actingOf(person(b.person.id)), general, 'three');
    expect(await unread()).toBe(true);

    // The token comes from another page: opening general itself would read it.
    const read = (messageId: string, channelId = general) => a.agent.submit(`/channels/${news.id}`, `/channels/${channelId}/read`, { messageId });
    expect((await read(two.id)).statusCode).toBe(204);
    expect(await unread()).toBe(true);
    expect((await read(three.id)).statusCode).toBe(204);
    expect(await unread()).toBe(false);
    // Never backwards.
    expect((await read(two.id)).statusCode).toBe(204);
    expect(await unread()).toBe(false);

    expect((await read('abc')).statusCode).toBe(400);
    expect((await read(three.id, news.id)).statusCode).toBe(404);
    expect((await a.agent.postRaw(`/channels/${general}/read`, { messageId: three.id })).statusCode).toBe(403);
    const outsider = await signedIn(t, { name: 'Out Sider' });
    const refused = await outsider.agent.submit('/', `/channels/${general}/read`, { messageId: three.id });
    expect(refused.statusCode).toBe(404);
  });

  it('reporting a message deleted before the report arrived is no error and marks nothing (the page showed it live a moment before)', async () => {
    const { owner: a, server, channelId: general } = await channelOf('Del Reader');
    const b = await signedIn(t, { name: 'Del Poster' });
    await addMember(t.services, operatorActing(), server.id, b.person.id);
    const news = await createChannel(t.services, operatorActing(), server.id, { name: 'news' });
    await a.agent.get(`/channels/${general}`);
    const gone = await postMessage(t.services, actingOf(person(b.person.id)), general, 'soon gone');
    await deleteMessage(t.services, actingOf(person(b.person.id)), general, gone.id);
    await postMessage(t.services, actingOf(person(b.person.id)), general, 'still unread');
    const answer = await a.agent.submit(`/channels/${news.id}`, `/channels/${general}/read`, { messageId: gone.id });
    expect(answer.statusCode).toBe(204);
    expect((await a.agent.get(`/channels/${news.id}`)).body).toMatch(/class="unread"/);
  });

  it('names carry their highest coloured role\'s colour, made readable on the light and the dark panel', async () => {
    const { owner, server, channelId } = await channelOf('Rhea Roles');
    const member = await signedIn(t, { name: 'Cy Coloured' });
    await addMember(t.services, operatorActing(), server.id, member.person.id);
    // Created in order, so "Top" sits highest; "Plain" is higher than "Low" but has no colour.
    const low = await createRole(t.services, operatorActing(), server.id, { name: 'Low', permissions: 0n, color: 0x3366cc });
    const plain = await createRole(t.services, operatorActing(), server.id, { name: 'Plain', permissions: 0n });
    const top = await createRole(t.services, operatorActing(), server.id, { name: 'Top', permissions: 0n, color: 0xffee00 });
    await setMemberRoles(t.services, operatorActing(), server.id, member.person.id, [low.id, plain.id, top.id]);
    await setMemberRoles(t.services, operatorActing(), server.id, owner.person.id, [low.id, plain.id]);
    const bare = await signedIn(t, { name: 'Nia None' });
    await addMember(t.services, operatorActing(), server.id, bare.person.id);
    for (const who of [member, owner, bare]) await postMessage(t.services, actingOf(person(who.person.id)), channelId, `hello from ${who.person.name}`);

    const body = (await owner.agent.get(`/channels/${channelId}`)).body;
    const colors = /data-author-colors="([^"]*)"/.exec(body)?.[1] ?? '';
    const entries = new Map(colors.split(' ').map((e) => e.split('=') as [string, string]));
    // Yellow fails 4.5:1 on white: darkened for the light theme; on the dark panel it is kept.
    expect(entries.get(member.person.id)).toBe('#807700/#ffee00');
    // The highest role with a colour, skipping the higher one without.
    expect(entries.get(owner.person.id)).toBe('#3366cc/#668cd9');
    expect(entries.has(bare.person.id)).toBe(false);
    expect(body).toContain(`data-author="${member.person.id}"`);
  });
});
