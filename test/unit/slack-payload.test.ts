import { describe, expect, it } from 'vitest';
import { parseMessagePayload } from '../../src/modules/messages/message-payload.js';
import { mapSlackPayload, mrkdwnToMarkdown, slackColor } from '../../src/modules/webhooks/slack-payload.js';

function mapped(body: unknown) {
  const result = mapSlackPayload(body);
  if (!result.ok) throw new Error(result.message);
  return result.payload;
}

describe('Slack mrkdwn → Gatehouse markdown', () => {
  it('converts *bold*, keeps _italic_, converts ~strike~', () => {
    expect(mrkdwnToMarkdown('*Build* _passed_ ~slowly~')).toBe('**Build** _passed_ ~~slowly~~');
  });

  it('turns <url|label> into a Markdown link and <url> into the bare URL', () => {
    expect(mrkdwnToMarkdown('see <https://ci.example/1|build 1> or <https://ci.example/2>')).toBe('see [build 1](https://ci.example/1) or https://ci.example/2');
  });

  it('renders <!here>, <!channel>, <@U…> and <#C…|name> as inert text', () => {
    expect(mrkdwnToMarkdown('<!here> <!channel> <!everyone> <@U024BE7LH> <@U1|ana> <#C1|general> <!subteam^S1|@ops> <!date^1392734382^{date}|Feb 18>')).toBe(
      '@here @channel @everyone @U024BE7LH @ana #general @ops Feb 18',
    );
  });

  it('leaves code spans and blocks alone and unescapes &lt; &gt; &amp;', () => {
    expect(mrkdwnToMarkdown('`*x*` ```a *b*``` a &lt;b&gt; &amp; *c*')).toBe('`*x*` ```a *b*``` a <b> & **c**');
  });

  it('does not treat a*b*c inside a word as bold', () => {
    expect(mrkdwnToMarkdown('2*3*4')).toBe('2*3*4');
  });

  it('runs in time proportional to its input on pathological text', () => {
    // 100,000 unmatched delimiters: a super-linear pattern would not finish this test's run.
    const text = '*_~<'.repeat(25_000);
    expect(mrkdwnToMarkdown(text).length).toBeGreaterThan(0);
  });
});

describe('Slack attachments → embeds', () => {
  it('maps colour names and hex colours', () => {
    expect([slackColor('good'), slackColor('warning'), slackColor('danger'), slackColor('#36a64f'), slackColor('fff'), slackColor('nope')]).toEqual([
      0x2eb886, 0xdaa038, 0xa30200, 0x36a64f, 0xffffff, undefined,
    ]);
  });

  it('maps every attachment field', () => {
    const payload = mapped({
      attachments: [
        {
          fallback: 'Build failed',
          color: 'danger',
          pretext: '*Heads up*',
          author_name: 'ci-bot',
          author_link: 'https://ci.example/bot',
          author_icon: 'https://ci.example/bot.png',
          title: 'Build #42',
          title_link: 'https://ci.example/42',
          text: 'Failed on _main_',
          fields: [
            { title: 'Branch', value: 'main', short: true },
            { title: 'Took', value: '3m', short: false },
          ],
          image_url: 'https://ci.example/graph.png',
          thumb_url: 'https://ci.example/thumb.png',
          footer: 'CI',
          footer_icon: 'https://ci.example/ci.png',
          ts: 1700000000,
        },
      ],
    });
    expect(payload).toEqual({
      content: '**Heads up**',
      embeds: [
        {
          color: 0xa30200,
          author: { name: 'ci-bot', url: 'https://ci.example/bot', icon_url: 'https://ci.example/bot.png' },
          title: 'Build #42',
          url: 'https://ci.example/42',
          description: 'Failed on _main_',
          fields: [
            { name: 'Branch', value: 'main', inline: true },
            { name: 'Took', value: '3m', inline: false },
          ],
          image: { url: 'https://ci.example/graph.png' },
          thumbnail: { url: 'https://ci.example/thumb.png' },
          footer: { text: 'CI', icon_url: 'https://ci.example/ci.png' },
          timestamp: '2023-11-14T22:13:20.000Z',
        },
      ],
    });
  });

  it('uses fallback when an attachment shows nothing else', () => {
    expect(mapped({ attachments: [{ fallback: 'Plain summary', color: 'good' }] }).embeds).toEqual([{ color: 0x2eb886, description: 'Plain summary' }]);
  });

  it('drops URLs execute would refuse instead of failing the message', () => {
    const payload = mapped({ attachments: [{ title: 'x', title_link: 'javascript:alert(1)', image_url: 'not a url' }] });
    expect(payload.embeds).toEqual([{ title: 'x' }]);
  });

  it('keeps at most 10 embeds and 6000 characters over all, and cuts long texts', () => {
    const attachments = Array.from({ length: 14 }, (_, i) => ({ title: `t${i}`, text: 'x'.repeat(5000) }));
    const payload = mapped({ text: 'y'.repeat(3000), attachments });
    expect(payload.content?.length).toBe(2000);
    expect(payload.embeds?.length).toBe(1);
    const parsed = parseMessagePayload(payload, { identityOverride: true, serviceName: 'Gatehouse' });
    expect(parsed.ok).toBe(true);
  });
});

describe('Slack blocks → embeds', () => {
  it('maps header, section (text, fields, image accessory), context, divider and image', () => {
    const payload = mapped({
      text: 'fallback only',
      blocks: [
        { type: 'header', text: { type: 'plain_text', text: 'Deploy' } },
        { type: 'section', text: { type: 'mrkdwn', text: '*v1.2* is live' }, accessory: { type: 'image', image_url: 'https://ci.example/t.png', alt_text: 't' } },
        { type: 'section', fields: [{ type: 'mrkdwn', text: '*Env*\nprod' }] },
        { type: 'context', elements: [{ type: 'mrkdwn', text: 'by ana' }, { type: 'image', image_url: 'https://x.example/a.png', alt_text: 'a' }] },
        { type: 'divider' },
        { type: 'image', image_url: 'https://ci.example/chart.png', alt_text: 'chart', title: { type: 'plain_text', text: 'Latency' } },
        { type: 'actions', elements: [] },
      ],
    });
    expect(payload.content).toBeUndefined();
    expect(payload.embeds).toEqual([
      {
        title: 'Deploy',
        description: '**v1.2** is live\nby ana',
        thumbnail: { url: 'https://ci.example/t.png' },
        fields: [{ name: '\u200b', value: '**Env**\nprod', inline: true }],
      },
      { image: { url: 'https://ci.example/chart.png' }, title: 'Latency' },
    ]);
  });
});

describe('Slack payloads that map to nothing', () => {
  it('refuses an empty body, a non-object and blocks of nothing, with the reason', () => {
    for (const body of [{}, [], 'text', { blocks: [{ type: 'actions' }] }, { attachments: [{ color: 'good' }] }]) {
      const result = mapSlackPayload(body);
      expect(result.ok, JSON.stringify(body)).toBe(false);
    }
  });

  it('passes username and icon_url through for execute to judge', () => {
    expect(mapped({ text: 'hi', username: 'Alerts', icon_url: 'https://x.example/a.png' })).toEqual({ content: 'hi', username: 'Alerts', avatar_url: 'https://x.example/a.png' });
  });
});
