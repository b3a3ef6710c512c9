import { describe, expect, it } from 'vitest';
import type { ApiError } from '../../src/core/errors.js';
import { messageIsEmpty } from '../../src/modules/messages/embed.js';
import { checkAvatarUrl, checkDisplayName, countCodePoints, parseMessagePayload, type MessagePayload } from '../../src/modules/messages/message-payload.js';

const execute = { identityOverride: true, serviceName: 'Gatehouse' };

function ok(body: unknown, options = execute): MessagePayload {
  const result = parseMessagePayload(body, options);
  if (!result.ok) throw new Error(`refused: ${JSON.stringify({ code: result.error.code, errors: result.error.errors })}`);
  return result.value;
}

function refused(body: unknown, options = execute): ApiError {
  const result = parseMessagePayload(body, options);
  if (result.ok) throw new Error(`accepted: ${JSON.stringify(result.value)}`);
  return result.error;
}

/** The first error code at a path of the 50035 tree. */
function codeAt(error: ApiError, path: (string | number)[]): string | undefined {
  let node: unknown = error.errors;
  for (const key of path) node = (node as Record<string, unknown> | undefined)?.[String(key)];
  const list = (node as { _errors?: { code: string }[] } | undefined)?._errors;
  return list?.[0]?.code;
}

const embed = (extra: Record<string, unknown> = {}) => ({ title: 'Build', ...extra });

describe('content (SPEC §2.9: up to 2000 characters, counted in Unicode code points)', () => {
  it('accepts 2000 code points and refuses 2001', () => {
    expect(ok({ content: 'a'.repeat(2000) }).content).toHaveLength(2000);
    const error = refused({ content: 'a'.repeat(2001) });
    expect(error.status).toBe(400);
    expect(error.code).toBe(50035);
    expect(error.errors).toEqual({ content: { _errors: [{ code: 'BASE_TYPE_MAX_LENGTH', message: 'Must be 2000 or fewer in length.' }] } });
  });

  it('counts an astral emoji once, although it is two UTF-16 units', () => {
    expect(countCodePoints('😀')).toBe(1);
    expect(ok({ content: '😀'.repeat(2000) }).content).toBe('😀'.repeat(2000));
    expect(codeAt(refused({ content: '😀'.repeat(2001) }), ['content'])).toBe('BASE_TYPE_MAX_LENGTH');
  });

  it('counts each code point of an emoji with a variation selector, a ZWJ sequence and a combining mark', () => {
    expect(countCodePoints('❤️')).toBe(2);
    expect(countCodePoints('👩‍💻')).toBe(3);
    expect(countCodePoints('e\u0301')).toBe(2);
    expect(ok({ content: 'e\u0301'.repeat(1000) }).content).toBe('e\u0301'.repeat(1000)); // 2000 code points
    expect(codeAt(refused({ content: `${'e\u0301'.repeat(1000)}x` }), ['content'])).toBe('BASE_TYPE_MAX_LENGTH');
    expect(ok({ content: `${'a'.repeat(1998)}❤️` }).content).toBe(`${'a'.repeat(1998)}❤️`);
    expect(codeAt(refused({ content: `${'a'.repeat(1999)}❤️` }), ['content'])).toBe('BASE_TYPE_MAX_LENGTH');
  });

  it('keeps mentions as literal text', () => {
    expect(ok({ content: '@everyone @here <@123>' }).content).toBe('@everyone @here <@123>');
  });

  it('refuses a non-string content at its path', () => {
    expect(codeAt(refused({ content: 42 }), ['content'])).toBe('BASE_TYPE_BAD_TYPE');
  });
});

describe('empty messages (50006)', () => {
  it('a payload without content or embeds, or with only whitespace, is an empty message', () => {
    for (const body of [{}, { content: '' }, { content: '   \n' }, { embeds: [] }, { content: '', embeds: [] }, { content: null, embeds: null }, { tts: true }]) {
      const error = refused(body);
      expect(error.code, JSON.stringify(body)).toBe(50006);
      expect(error.status).toBe(400);
      expect(error.message).toBe('Cannot send an empty message');
    }
  });

  it('an embed with nothing to show (only a color) does not make a message', () => {
    expect(refused({ embeds: [{ color: 5 }] }).code).toBe(50006);
    expect(ok({ embeds: [{ color: 5, description: 'x' }] }).embeds).toEqual([{ color: 5, description: 'x' }]);
  });

  it('a non-object body is a 50035, not a crash', () => {
    for (const body of [null, [], 'text', 5]) expect(refused(body).code).toBe(50035);
  });
});

describe('embeds (up to 10, with Discord\'s limits)', () => {
  it('accepts 10 embeds and refuses 11', () => {
    expect(ok({ embeds: Array.from({ length: 10 }, () => embed()) }).embeds).toHaveLength(10);
    const error = refused({ embeds: Array.from({ length: 11 }, () => embed()) });
    expect(error.errors).toEqual({ embeds: { _errors: [{ code: 'BASE_TYPE_MAX_LENGTH', message: 'Must be 10 or fewer in length.' }] } });
  });

  const limits: Array<[string, number, (s: string) => Record<string, unknown>, (string | number)[]]> = [
    ['title', 256, (s) => ({ title: s }), ['title']],
    ['description', 4096, (s) => ({ description: s }), ['description']],
    ['field name', 256, (s) => ({ fields: [{ name: s, value: 'v' }] }), ['fields', 0, 'name']],
    ['field value', 1024, (s) => ({ fields: [{ name: 'n', value: s }] }), ['fields', 0, 'value']],
    ['footer text', 2048, (s) => ({ footer: { text: s } }), ['footer', 'text']],
    ['author name', 256, (s) => ({ author: { name: s } }), ['author', 'name']],
  ];
  for (const [what, max, build, path] of limits) {
    it(`${what}: ${max} code points pass, ${max + 1} are refused at embeds.0.${path.join('.')}`, () => {
      expect(ok({ embeds: [build('é'.repeat(max))] }).embeds).toHaveLength(1);
      const error = refused({ embeds: [build('é'.repeat(max + 1))] });
      expect(error.code).toBe(50035);
      expect(codeAt(error, ['embeds', 0, ...path])).toBe('BASE_TYPE_MAX_LENGTH');
    });
  }

  it('accepts 25 fields and refuses 26', () => {
    const fields = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `n${i}`, value: 'v' }));
    expect(ok({ embeds: [{ fields: fields(25) }] }).embeds?.[0]?.fields).toHaveLength(25);
    expect(codeAt(refused({ embeds: [{ fields: fields(26) }] }), ['embeds', 0, 'fields'])).toBe('BASE_TYPE_MAX_LENGTH');
  });

  it('counts 6000 characters over all embeds of a message: 6000 pass, 6001 are refused', () => {
    const sixThousand = [{ description: 'd'.repeat(4000) }, { description: 'd'.repeat(1000), title: 't'.repeat(200), footer: { text: 'f'.repeat(300) }, author: { name: 'a'.repeat(200) }, fields: [{ name: 'n'.repeat(100), value: 'v'.repeat(200) }] }];
    expect(ok({ embeds: sixThousand }).embeds).toHaveLength(2);
    const over = [...sixThousand, { title: 'x' }];
    expect(refused({ embeds: over }).errors).toEqual({ embeds: { _errors: [{ code: 'MAX_EMBED_SIZE_EXCEEDED', message: 'Embed size exceeds maximum size of 6000' }] } });
  });

  it('takes http(s) URLs only, of at most 2048 characters', () => {
    const long = `https://example.com/${'a'.repeat(2048 - 20)}`;
    expect(long).toHaveLength(2048);
    expect(ok({ embeds: [embed({ url: long })] }).embeds?.[0]?.url).toBe(long);
    expect(codeAt(refused({ embeds: [embed({ url: `${long}b` })] }), ['embeds', 0, 'url'])).toBe('BASE_TYPE_MAX_LENGTH');
    expect(codeAt(refused({ embeds: [embed({ url: 'javascript:alert(1)' })] }), ['embeds', 0, 'url'])).toBe('URL_TYPE_INVALID_SCHEME');
    expect(codeAt(refused({ embeds: [embed({ image: { url: 'data:image/png;base64,AAAA' } })] }), ['embeds', 0, 'image', 'url'])).toBe('URL_TYPE_INVALID_SCHEME');
    expect(codeAt(refused({ embeds: [embed({ thumbnail: { url: 'not a url' } })] }), ['embeds', 0, 'thumbnail', 'url'])).toBe('URL_TYPE_INVALID_URL');
    expect(ok({ embeds: [embed({ url: 'http://example.com/x' })] }).embeds?.[0]?.url).toBe('http://example.com/x');
  });

  it('takes a color from 0 to 0xFFFFFF and an ISO 8601 timestamp', () => {
    expect(ok({ embeds: [embed({ color: 0xffffff })] }).embeds?.[0]?.color).toBe(0xffffff);
    expect(ok({ embeds: [embed({ color: 0 })] }).embeds?.[0]?.color).toBe(0);
    expect(codeAt(refused({ embeds: [embed({ color: 0x1000000 })] }), ['embeds', 0, 'color'])).toBe('NUMBER_TYPE_MAX');
    expect(codeAt(refused({ embeds: [embed({ color: -1 })] }), ['embeds', 0, 'color'])).toBe('NUMBER_TYPE_MIN');
    expect(codeAt(refused({ embeds: [embed({ color: '#fff' })] }), ['embeds', 0, 'color'])).toBe('NUMBER_TYPE_COERCE');
    expect(codeAt(refused({ embeds: [embed({ color: 1.5 })] }), ['embeds', 0, 'color'])).toBe('NUMBER_TYPE_COERCE');
    expect(ok({ embeds: [embed({ timestamp: '2026-03-04T05:06:07+02:00' })] }).embeds?.[0]?.timestamp).toBe('2026-03-04T03:06:07.000Z');
    expect(ok({ embeds: [embed({ timestamp: '2026-03-04T05:06:07.123Z' })] }).embeds?.[0]?.timestamp).toBe('2026-03-04T05:06:07.123Z');
    expect(ok({ embeds: [embed({ timestamp: '2026-03-04T05:06:07' })] }).embeds?.[0]?.timestamp).toBe('2026-03-04T05:06:07.000Z');
    expect(codeAt(refused({ embeds: [embed({ timestamp: 'yesterday' })] }), ['embeds', 0, 'timestamp'])).toBe('DATE_TIME_TYPE_PARSE');
    expect(codeAt(refused({ embeds: [embed({ timestamp: '2026-13-45T99:00:00Z' })] }), ['embeds', 0, 'timestamp'])).toBe('DATE_TIME_TYPE_PARSE');
  });

  it('stores embeds normalised: camelCase, known fields only, inline defaulting to false', () => {
    const value = ok({
      embeds: [
        {
          title: 'T',
          type: 'rich',
          video: { url: 'https://v.example' },
          provider: { name: 'p' },
          footer: { text: 'F', icon_url: 'https://i.example/f.png', proxy_icon_url: 'https://proxy.example' },
          author: { name: 'A', url: 'https://a.example', icon_url: 'https://i.example/a.png' },
          image: { url: 'https://i.example/img.png', width: 5, height: 5, proxy_url: 'https://proxy.example' },
          fields: [{ name: 'n', value: 'v' }, { name: 'm', value: 'w', inline: true }],
        },
      ],
    });
    expect(value.embeds).toEqual([
      {
        title: 'T',
        footer: { text: 'F', iconUrl: 'https://i.example/f.png' },
        author: { name: 'A', url: 'https://a.example', iconUrl: 'https://i.example/a.png' },
        image: { url: 'https://i.example/img.png' },
        fields: [
          { name: 'n', value: 'v', inline: false },
          { name: 'm', value: 'w', inline: true },
        ],
      },
    ]);
  });

  it('reports every problem at once, each at its path', () => {
    const error = refused({ content: 5, embeds: [{ title: 't'.repeat(257) }, { fields: [{ name: '', value: 'v', inline: 'yes' }], footer: {} }, 'x'] });
    expect(codeAt(error, ['content'])).toBe('BASE_TYPE_BAD_TYPE');
    expect(codeAt(error, ['embeds', 0, 'title'])).toBe('BASE_TYPE_MAX_LENGTH');
    expect(codeAt(error, ['embeds', 1, 'fields', 0, 'name'])).toBe('BASE_TYPE_BAD_LENGTH');
    expect(codeAt(error, ['embeds', 1, 'fields', 0, 'inline'])).toBe('BASE_TYPE_BAD_TYPE');
    expect(codeAt(error, ['embeds', 1, 'footer', 'text'])).toBe('BASE_TYPE_REQUIRED');
    expect(codeAt(error, ['embeds', 2])).toBe('DICT_TYPE_CONVERT');
  });

  it('refuses embeds that are not a list', () => {
    expect(codeAt(refused({ embeds: { title: 'x' } }), ['embeds'])).toBe('LIST_TYPE_CONVERT');
  });
});

describe('username and avatarUrl (SPEC §2.9: for this message only)', () => {
  it('takes a username of 1–80 code points after trimming', () => {
    expect(ok({ content: 'x', username: '  Deploy bot  ' }).username).toBe('Deploy bot');
    expect(ok({ content: 'x', username: '🚀'.repeat(80) }).username).toBe('🚀'.repeat(80));
    expect(codeAt(refused({ content: 'x', username: '🚀'.repeat(81) }), ['username'])).toBe('BASE_TYPE_BAD_LENGTH');
    expect(codeAt(refused({ content: 'x', username: '   ' }), ['username'])).toBe('BASE_TYPE_BAD_LENGTH');
    expect(codeAt(refused({ content: 'x', username: 7 }), ['username'])).toBe('BASE_TYPE_BAD_TYPE');
    expect(codeAt(refused({ content: 'x', username: 'two\nlines' }), ['username'])).toBe('USERNAME_INVALID');
  });

  it('refuses a username that passes for the service, at its path with a clear message', () => {
    const error = refused({ content: 'x', username: 'G\u0430tehouse' });
    expect(error.code).toBe(50035);
    expect(error.errors).toEqual({ username: { _errors: [{ code: 'USERNAME_INVALID', message: 'Names that pass for Gatehouse are not allowed' }] } });
  });

  it('takes avatarUrl (or Discord\'s avatar_url) as an https URL only', () => {
    expect(ok({ content: 'x', avatarUrl: 'https://i.example/a.png' }).avatarUrl).toBe('https://i.example/a.png');
    expect(ok({ content: 'x', avatar_url: 'https://i.example/b.png' }).avatarUrl).toBe('https://i.example/b.png');
    expect(codeAt(refused({ content: 'x', avatarUrl: 'http://i.example/a.png' }), ['avatarUrl'])).toBe('URL_TYPE_INVALID_SCHEME');
  });

  it('ignores both where the identity cannot be overridden (bot messages, edits)', () => {
    const value = ok({ content: 'x', username: 'Gatehouse', avatarUrl: 'ftp://x' }, { identityOverride: false, serviceName: 'Gatehouse' });
    expect(value).toEqual({ content: 'x' });
  });

  it('ignores unknown keys that Discord clients send', () => {
    expect(ok({ content: 'hi', tts: true, nonce: '1', allowed_mentions: { parse: [] }, flags: 4, components: [], thread_name: 't' })).toEqual({ content: 'hi', embeds: undefined } as MessagePayload);
  });
});

describe('edits (partial)', () => {
  const edit = { identityOverride: false, serviceName: 'Gatehouse', partial: true };

  it('leaves absent fields out, and reads null as "clear"', () => {
    expect(ok({ content: 'new' }, edit)).toEqual({ content: 'new' });
    expect(ok({ embeds: [embed()] }, edit)).toEqual({ embeds: [{ title: 'Build' }] });
    expect(ok({ content: null, embeds: [embed()] }, edit)).toEqual({ content: '', embeds: [{ title: 'Build' }] });
    expect(ok({ content: 'x', embeds: null }, edit)).toEqual({ content: 'x', embeds: [] });
  });

  it('refuses an edit that says nothing, or clears both', () => {
    expect(refused({}, edit).code).toBe(50006);
    expect(refused({ username: 'x' }, edit).code).toBe(50006);
    expect(refused({ content: '', embeds: [] }, edit).code).toBe(50006);
  });

  it('applies the same limits', () => {
    expect(codeAt(refused({ content: 'a'.repeat(2001) }, edit), ['content'])).toBe('BASE_TYPE_MAX_LENGTH');
  });

  it('messageIsEmpty judges the merged result', () => {
    expect(messageIsEmpty('', [])).toBe(true);
    expect(messageIsEmpty('  ', [{ color: 1 }])).toBe(true);
    expect(messageIsEmpty('', [{ title: 't' }])).toBe(false);
    expect(messageIsEmpty('x', [])).toBe(false);
  });
});

describe('shared field checks', () => {
  it('checkDisplayName applies the length and impersonation rules', () => {
    expect(checkDisplayName(' CI ', 'Gatehouse')).toEqual({ ok: true, value: 'CI' });
    expect(checkDisplayName('system', 'Gatehouse')).toMatchObject({ ok: false, error: { code: 'USERNAME_INVALID' } });
  });

  it('checkAvatarUrl takes https or nothing', () => {
    expect(checkAvatarUrl(null)).toEqual({ ok: true, value: null });
    expect(checkAvatarUrl('https://x.example/a.png')).toEqual({ ok: true, value: 'https://x.example/a.png' });
    expect(checkAvatarUrl('http://x.example/a.png')).toMatchObject({ ok: false, error: { code: 'URL_TYPE_INVALID_SCHEME' } });
  });
});

describe('characters a database cannot store', () => {
  it('refuses NUL in content at its path instead of failing on PostgreSQL', () => {
    expect(codeAt(refused({ content: 'a\u0000b' }), ['content'])).toBe('BASE_TYPE_INVALID');
  });
});
