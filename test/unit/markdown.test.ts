import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { renderMarkdown } from '../../src/modules/messages/markdown.js';

const md = (text: string) => renderMarkdown(text).value;
const LINK = 'target="_blank" rel="noopener noreferrer nofollow"';

/**
 * Every tag in the output, checked against what markdown.ts may write: a fixed set of elements,
 * and links with only an http(s) href, an optional title, and the fixed target/rel.
 */
function unexpectedMarkup(out: string): string[] {
  const bad: string[] = [];
  const withoutTags = out.replace(/<(\/?)([a-z]+)((?:\s[^<>]*)?)>/g, (tag, close: string, name: string, attrs: string) => {
    if (close) {
      if (!['strong', 'em', 'u', 's', 'code', 'pre', 'a'].includes(name) || attrs) bad.push(tag);
    } else if (name === 'a') {
      if (!/^ href="https?:\/\/[^"<>]*"(?: title="https?:\/\/[^"<>]*")? target="_blank" rel="noopener noreferrer nofollow"$/.test(attrs)) bad.push(tag);
    } else if (!['strong', 'em', 'u', 's', 'code', 'pre'].includes(name) || attrs) {
      bad.push(tag);
    }
    return '';
  });
  // Outside the tags above, no markup character survives unescaped.
  if (/[<>"]/.test(withoutTags)) bad.push(`stray character in ${JSON.stringify(withoutTags)}`);
  return bad;
}

describe('message Markdown: the small subset the channel view shows', () => {
  it('bold, italics (both spellings), underline, strike-through', () => {
    expect(md('**bold** *it* _also it_ __under__ ~~gone~~')).toBe('<strong>bold</strong> <em>it</em> <em>also it</em> <u>under</u> <s>gone</s>');
    expect(md('***both***')).toBe('<strong><em>both</em></strong>');
    expect(md('**bold with *italics* inside**')).toBe('<strong>bold with <em>italics</em> inside</strong>');
  });

  it('leaves ordinary punctuation and snake_case names alone', () => {
    expect(md('2 * 3 * 4 = 24')).toBe('2 * 3 * 4 = 24');
    expect(md('set max_line_length, a_b and snake_case_names')).toBe('set max_line_length, a_b and snake_case_names');
    expect(md('**not closed')).toBe('**not closed');
    expect(md('a backslash keeps \\*stars\\* and \\_lines\\_')).toBe('a backslash keeps *stars* and _lines_');
  });

  it('inline code and code blocks show their text verbatim, markup and all', () => {
    expect(md('run `npm **test**` now')).toBe('run <code>npm **test**</code> now');
    expect(md('``a `tick` inside``')).toBe('<code>a &#96;tick&#96; inside</code>');
    expect(md('```js\nconst a = "<b>" && **x**;\n```')).toBe('<pre><code>const a = &quot;&lt;b&gt;&quot; &amp;&amp; **x**;</code></pre>');
    expect(md('```one line```')).toBe('<pre><code>one line</code></pre>');
  });

  it('links: masked, in angle brackets and bare, all opening in a new tab without opener or referrer', () => {
    expect(md('[the docs](https://example.com/docs)')).toBe(`<a href="https://example.com/docs" title="https://example.com/docs" ${LINK}>the docs</a>`);
    expect(md('[**bold** docs](https://example.com)')).toBe(`<a href="https://example.com/" title="https://example.com/" ${LINK}><strong>bold</strong> docs</a>`);
    expect(md('see <https://example.com/a>')).toBe(`see <a href="https://example.com/a" ${LINK}>https://example.com/a</a>`);
    expect(md('see https://example.com/a?b=1&c=2.')).toBe(`see <a href="https://example.com/a?b=1&amp;c=2" ${LINK}>https://example.com/a?b=1&amp;c=2</a>.`);
    expect(md('(https://en.wikipedia.org/wiki/Foo_(bar))')).toBe(`(<a href="https://en.wikipedia.org/wiki/Foo_(bar)" ${LINK}>https://en.wikipedia.org/wiki/Foo_(bar)</a>)`);
    expect(md('http://plain.example works too')).toBe(`<a href="http://plain.example/" ${LINK}>http://plain.example</a> works too`);
  });

  it('keeps line breaks as typed (the stylesheet shows them) and mentions as literal text', () => {
    expect(md('line one\nline two')).toBe('line one\nline two');
    expect(md('@everyone @here <@123>')).toBe('@everyone @here &lt;@123&gt;');
  });

  describe('no HTML passes through (XSS payloads)', () => {
    const payloads: Array<[string, string]> = [
      ['<script>alert(1)</script>', '&lt;script&gt;alert(1)&lt;/script&gt;'],
      ['<img src=x onerror=alert(1)>', '&lt;img src=x onerror=alert(1)&gt;'],
      ['**<b onmouseover=alert(1)>x</b>**', '<strong>&lt;b onmouseover=alert(1)&gt;x&lt;/b&gt;</strong>'],
      ['[click](javascript:alert(1))', '[click](javascript:alert(1))'],
      ['[click](JaVaScRiPt:alert(1))', '[click](JaVaScRiPt:alert(1))'],
      ['[click](data:text/html,<script>alert(1)</script>)', '[click](data:text/html,&lt;script&gt;alert(1)&lt;/script&gt;)'],
      ['[click](vbscript:msgbox)', '[click](vbscript:msgbox)'],
      ['<javascript:alert(1)>', '&lt;javascript:alert(1)&gt;'],
      ['`</code><script>alert(1)</script>`', '<code>&lt;/code&gt;&lt;script&gt;alert(1)&lt;/script&gt;</code>'],
      ["it's \"quoted\" & `back`", 'it&#39;s &quot;quoted&quot; &amp; <code>back</code>'],
    ];
    it.each(payloads)('%s', (input, expected) => {
      expect(md(input)).toBe(expected);
      expect(unexpectedMarkup(md(input))).toEqual([]);
    });

    it('a quote inside a link address cannot break out of the attribute', () => {
      const out = md('[x](https://example.com/"onmouseover="alert(1))');
      expect(out).toContain('href="https://example.com/%22onmouseover=%22alert(1)"');
      expect(unexpectedMarkup(out)).toEqual([]);
      const bare = md('https://example.com/"><script>alert(1)</script>');
      expect(bare).not.toContain('<script');
      expect(unexpectedMarkup(bare)).toEqual([]);
    });

    it('a link inside a link text is not made (no nested anchors)', () => {
      const out = md('[https://evil.example](https://good.example)');
      expect(out.match(/<a /g)).toHaveLength(1);
      expect(out).toContain('title="https://good.example/"');
    });

    it('for any input, the output holds only the markup listed above', () => {
      const alphabet = fc.constantFrom('*', '_', '~', '`', '[', ']', '(', ')', '<', '>', '"', "'", '&', '\\', '\n', ' ', 'a', 'h', 'https://', 'javascript:', 'x.io', '/', ':', '=', 'on');
      fc.assert(
        fc.property(fc.array(alphabet, { maxLength: 60 }).map((parts) => parts.join('')), (text) => {
          expect(unexpectedMarkup(md(text))).toEqual([]);
        }),
        { numRuns: 600 },
      );
    });
  });

  it('renders the longest embed description of pathological input with only the markup listed above', () => {
    // How long this takes is a benchmark figure (bench/adversarial.mjs, DESIGN §6), not asserted here.
    for (const unit of ['*', '**a', '_a ', '[a](', '`', '``a', '```a', '~~a', 'https://a.io/*', '[a](https://', '<https://', '\\', '*a_', '__a']) {
      const text = unit.repeat(Math.ceil(4096 / unit.length)).slice(0, 4096);
      const out = md(text);
      expect(unexpectedMarkup(out), unit).toEqual([]);
      // Backslashes escape each other in pairs; everything else shows at least as typed.
      expect(out.length, unit).toBeGreaterThanOrEqual(text.length / 2);
    }
  });

  describe('every input renders in linear time (issue #21 §1; growth measured by bench/adversarial.mjs)', () => {
    it('a bare URL followed by 50,000 ")" is a link to the URL and the parentheses are text', () => {
      const out = md(`https://example.com/${')'.repeat(50_000)}`);
      expect(out).toBe(`<a href="https://example.com/" ${LINK}>https://example.com/</a>${')'.repeat(50_000)}`);
    });

    it('a bare URL keeps its balanced parentheses and gives back the unbalanced ones', () => {
      expect(md('https://en.wikipedia.org/wiki/Gate_(disambiguation)))')).toBe(
        `<a href="https://en.wikipedia.org/wiki/Gate_(disambiguation)" ${LINK}>https://en.wikipedia.org/wiki/Gate_(disambiguation)</a>))`,
      );
      expect(md(`(https://a.example/x_(y)${'('.repeat(3)}${')'.repeat(10)}`)).toBe(
        `(<a href="https://a.example/x_(y)((()))" ${LINK}>https://a.example/x_(y)((()))</a>${')'.repeat(7)}`,
      );
    });

    it('tens of thousands of openers that never close are shown as the text they are', () => {
      for (const unit of ['*a ', '[a](x', '`', '<https:']) {
        const text = unit.repeat(Math.ceil(60_000 / unit.length));
        const out = md(text).replace(/&#96;/g, '`').replace(/&lt;/g, '<');
        expect(out === text, unit).toBe(true);
      }
    });

    it('markup before, between and after thousands of unclosed openers is still rendered', () => {
      const out = md(`**bold** ${'*a '.repeat(5000)}~~gone~~ ${'[a](x'.repeat(5000)} __under__`);
      expect(out.startsWith('<strong>bold</strong> *a *a ')).toBe(true);
      expect(out).toContain(' <s>gone</s> [a](x[a](x');
      expect(out.endsWith(' <u>under</u>')).toBe(true);
    });

    it('a run that starts like a URL but is not one is text up to the next space, and the next run is tried afresh', () => {
      const run = '/http://['.repeat(10_000);
      expect(md(run)).toBe(run);
      expect(md('http://[oops] https://ok.example')).toBe(`http://[oops] <a href="https://ok.example/" ${LINK}>https://ok.example</a>`);
    });

    it('a masked link address stops at "[" (written %5B), so the address of one link never runs into the next', () => {
      expect(md('[a](https://x.example/%5B1%5D)')).toBe(`<a href="https://x.example/%5B1%5D" title="https://x.example/%5B1%5D" ${LINK}>a</a>`);
      expect(md('[a](https://x.example/[1])')).not.toContain('title=');
    });
  });
});
