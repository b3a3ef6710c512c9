import { IncomingWebhook } from '@slack/webhook';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Channel } from '../../src/modules/directory/channels.js';
import { createWebhook } from '../../src/modules/webhooks/webhooks.service.js';
import type { ServedApp } from '../support/browser.js';
import { serveOwnedChannel } from '../support/served-channel.js';
import { actingOf } from '../support/acting.js';

/**
 * Issue #23's promise that tools posting to Slack post here unchanged: the npm package
 * @slack/webhook, unmodified, pointed at {webhook URL}/slack on a listening server.
 */

let served: ServedApp;
let channel: Channel;
let ownerId: string;
beforeAll(async () => {
  ({ served, channel, ownerId } = await serveOwnedChannel('Slack interop'));
});
afterAll(async () => served.close());

describe('@slack/webhook IncomingWebhook against …/{token}/slack', () => {
  it('sends text, attachments and blocks; the stored message and its embeds are what Slack would show', async () => {
    const { webhook, token } = await createWebhook(served.t.services, actingOf({ kind: 'person', id: ownerId }), channel, { name: 'Monitoring' });
    const hook = new IncomingWebhook(`${served.baseUrl}/api/v1/webhooks/${webhook.id}/${token}/slack`, { username: 'Grafana', icon_url: 'https://img.example/grafana.png' });

    const textResult = await hook.send('*CPU* high on <https://grafana.example/d/1|web-1> <!channel>');
    expect(textResult.text).toBeDefined();

    await hook.send({
      attachments: [
        {
          fallback: 'Build #9 failed',
          color: 'danger',
          pretext: 'CI report',
          author_name: 'ci',
          title: 'Build #9',
          title_link: 'https://ci.example/9',
          text: 'Tests _failed_',
          fields: [{ title: 'Branch', value: 'main', short: true }],
          footer: 'CI',
          ts: '1700000000',
        },
      ],
    });

    await hook.send({
      text: 'Deploy finished',
      blocks: [
        { type: 'header', text: { type: 'plain_text', text: 'Deploy v2' } },
        { type: 'section', text: { type: 'mrkdwn', text: '*prod* is on ~v1~ v2' } },
        { type: 'divider' },
        { type: 'image', image_url: 'https://img.example/chart.png', alt_text: 'chart' },
      ],
    });

    const rows = await served.t.services.db.selectFrom('messages').selectAll().where('channel_id', '=', channel.id).orderBy('id').execute();
    expect(rows).toHaveLength(3);
    const [text, attachments, blocks] = rows.map((r) => ({ content: r.content, author: r.author_name, avatar: r.author_avatar_url, embeds: JSON.parse(String(r.embeds)) as unknown[] }));
    expect(text).toEqual({ content: '**CPU** high on [web-1](https://grafana.example/d/1) @channel', author: 'Grafana', avatar: 'https://img.example/grafana.png', embeds: [] });
    expect(attachments).toEqual({
      content: 'CI report',
      author: 'Grafana',
      avatar: 'https://img.example/grafana.png',
      embeds: [
        {
          title: 'Build #9',
          description: 'Tests _failed_',
          url: 'https://ci.example/9',
          timestamp: '2023-11-14T22:13:20.000Z',
          color: 0xa30200,
          footer: { text: 'CI' },
          author: { name: 'ci' },
          fields: [{ name: 'Branch', value: 'main', inline: true }],
        },
      ],
    });
    // With blocks, Slack shows the blocks and keeps `text` for notifications; so do we.
    expect(blocks?.content).toBe('');
    expect(blocks?.embeds).toEqual([{ title: 'Deploy v2', description: '**prod** is on ~~v1~~ v2' }, { image: { url: 'https://img.example/chart.png' } }]);
  });
});
