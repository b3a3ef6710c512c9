import { describe, expect, it } from 'vitest';
import { embedColor, embedsBlock, readEmbed } from '../../src/modules/messages/embeds.page.js';

const render = (embeds: unknown[]) => embedsBlock(embeds).value;

const full = {
  title: 'Build #42 passed',
  url: 'https://ci.example/builds/42',
  description: 'All **12** checks passed on `main`.',
  color: 0x2ecc71,
  timestamp: '2026-11-21T12:34:56.000Z',
  author: { name: 'CI Bot', url: 'https://ci.example', iconUrl: 'https://ci.example/icon.png' },
  footer: { text: 'ci.example', iconUrl: 'https://ci.example/footer.png' },
  image: { url: 'https://ci.example/chart.png' },
  thumbnail: { url: 'https://ci.example/thumb.png' },
  fields: [
    { name: 'Branch', value: 'main', inline: true },
    { name: 'Duration', value: '3 min', inline: true },
    { name: 'Changes', value: '- fix *flaky* test', inline: false },
  ],
};

describe('embeds in the channel view', () => {
  it('renders every part: colour bar, author, linked title, description, fields, image, thumbnail, footer and time', () => {
    const out = render([full]);
    expect(out).toContain('<rect width="1" height="1" fill="#2ecc71"/>');
    expect(out).toMatch(/<div class="embed-author"><img class="embed-icon" src="https:\/\/ci.example\/icon.png" alt="" width="24" height="24" loading="lazy" referrerpolicy="no-referrer"><a class="embed-author-name" href="https:\/\/ci.example\/" target="_blank" rel="noopener noreferrer nofollow">CI Bot<\/a><\/div>/);
    expect(out).toContain('<div class="embed-title"><a class="embed-title-text" href="https://ci.example/builds/42" target="_blank" rel="noopener noreferrer nofollow">Build #42 passed</a></div>');
    expect(out).toContain('<div class="embed-description">All <strong>12</strong> checks passed on <code>main</code>.</div>');
    expect(out).toContain('<div class="embed-field inline"><div class="embed-field-name">Branch</div><div class="embed-field-value">main</div></div>');
    expect(out).toContain('<div class="embed-field"><div class="embed-field-name">Changes</div><div class="embed-field-value">- fix <em>flaky</em> test</div></div>');
    expect(out).toContain('<img src="https://ci.example/chart.png" alt="Image attached to the embed" loading="lazy" referrerpolicy="no-referrer">');
    expect(out).toContain('<img class="embed-thumbnail" src="https://ci.example/thumb.png"');
    expect(out).toContain('class="embed has-thumbnail"');
    expect(out).toContain('<span>ci.example</span>');
    expect(out).toContain('<time datetime="2026-11-21T12:34:56.000Z">2026-11-21 12:34 UTC</time>');
  });

  it('uses no inline style attribute anywhere (CSP style-src self), the colour rides on an SVG fill', () => {
    const out = render([full, { ...full, color: 0 }, { title: 'no colour' }]);
    expect(out).not.toMatch(/\sstyle=/);
    expect(out).toContain('fill="#000000"');
    expect(out).toContain('<rect class="default" width="1" height="1"/>');
  });

  it('colours: any integer 0–0xFFFFFF exactly, anything else falls back to the theme', () => {
    expect(embedColor(0x5865f2)).toBe('#5865f2');
    expect(embedColor(0xffffff)).toBe('#ffffff');
    expect(embedColor(1)).toBe('#000001');
    for (const bad of [-1, 0x1000000, 1.5, '#fff', null, Number.NaN]) expect(embedColor(bad)).toBeUndefined();
  });

  it('a title without a url is text; a url alone shows nothing extra', () => {
    const out = render([{ title: 'Plain', description: 'd' }]);
    expect(out).toContain('<span class="embed-title-text">Plain</span>');
    expect(out).not.toContain('<a ');
  });

  it('escapes every text, and never turns a javascript: or data: URL into a link or image', () => {
    const out = render([
      {
        title: '<script>alert(1)</script>',
        url: 'javascript:alert(1)',
        description: '<img src=x onerror=alert(1)>',
        author: { name: '"><b>x', url: 'javascript:alert(2)', iconUrl: 'javascript:alert(3)' },
        footer: { text: '<i>f</i>', iconUrl: 'data:image/svg+xml,<svg onload=alert(1)>' },
        image: { url: 'data:image/png;base64,AAAA' },
        thumbnail: { url: 'javascript:alert(4)' },
        fields: [{ name: '<u>n</u>', value: '[x](javascript:alert(5))', inline: true }],
      },
    ]);
    expect(out).not.toMatch(/javascript:alert\(\d\)"/);
    expect(out).not.toContain('src="data:');
    expect(out).not.toMatch(/<(script|img src=x|b>|i>|u>n)/);
    expect(out).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(out).toContain('&quot;&gt;&lt;b&gt;x');
  });

  it('external images are https only; http images are left out, http links are kept', () => {
    const out = render([{ title: 't', url: 'http://example.com/page', image: { url: 'http://example.com/a.png' }, thumbnail: { url: 'http://example.com/b.png' } }]);
    expect(out).toContain('href="http://example.com/page"');
    expect(out).not.toContain('<img');
    expect(out).not.toContain('has-thumbnail');
  });

  it('reads stored values defensively: junk and empty embeds are left out, odd fields dropped', () => {
    expect(readEmbed(null)).toBeUndefined();
    expect(readEmbed('text')).toBeUndefined();
    expect(readEmbed({})).toBeUndefined();
    expect(readEmbed({ color: 5 })).toBeUndefined();
    expect(readEmbed({ title: 't', fields: [{ name: 'n' }, 'x', { name: 'a', value: 'b', inline: 'yes' }], timestamp: 'not a date' })).toEqual({
      title: 't',
      fields: [{ name: 'a', value: 'b', inline: false }],
    });
    expect(render([null, 5, {}, []])).toBe('');
  });

  it('renders several embeds in order', () => {
    const out = render([{ title: 'first' }, { title: 'second' }]);
    expect(out.indexOf('first')).toBeLessThan(out.indexOf('second'));
    expect(out.match(/class="embed"/g)).toHaveLength(2);
  });
});
