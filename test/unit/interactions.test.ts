import { describe, expect, it } from 'vitest';
import { checkAnswer, parseSlashInput, typeOptions } from '../../src/modules/interactions/interactions.js';

const json = (value: unknown) => Buffer.from(JSON.stringify(value));

describe('interaction answers (issue #40 §2, Discord interaction responses)', () => {
  it('type 4 with content is a message; flag 64 makes it ephemeral', () => {
    expect(checkAnswer(200, json({ type: 4, data: { content: 'hi' } }))).toEqual({ kind: 'message', content: 'hi', ephemeral: false });
    expect(checkAnswer(200, json({ type: 4, data: { content: 'hi', flags: 64 } }))).toEqual({ kind: 'message', content: 'hi', ephemeral: true });
  });

  it('not JSON, an unknown type, no content, content over 2000 characters, mentions, or a non-2xx status are invalid', () => {
    expect(checkAnswer(200, Buffer.from('nope'))).toMatchObject({ kind: 'invalid', reason: 'its answer is not JSON' });
    expect(checkAnswer(200, json({ type: 9 }))).toMatchObject({ kind: 'invalid' });
    expect(checkAnswer(200, json({ type: 4, data: {} }))).toMatchObject({ kind: 'invalid' });
    expect(checkAnswer(200, json({ type: 4, data: { content: 'é'.repeat(2001) } }))).toMatchObject({ kind: 'invalid', reason: 'its data.content is longer than 2000 characters' });
    expect(checkAnswer(200, json({ type: 4, data: { content: 'é'.repeat(2000) } }))).toMatchObject({ kind: 'message' });
    expect(checkAnswer(200, json({ type: 4, data: { content: 'hi', allowed_mentions: { parse: ['everyone'] } } }))).toMatchObject({ kind: 'invalid' });
    expect(checkAnswer(500, json({ type: 4, data: { content: 'hi' } }))).toMatchObject({ kind: 'invalid', reason: 'it answered 500, not 200' });
  });

  it('type 5 is a deferred answer', () => {
    expect(checkAnswer(200, json({ type: 5 }))).toEqual({ kind: 'deferred', ephemeral: false });
  });
});

describe('commands typed in the composer', () => {
  it('reads /name and the rest; anything else is not a command', () => {
    expect(parseSlashInput('  /Roll sides:6 ')).toEqual({ name: 'roll', rest: 'sides:6' });
    expect(parseSlashInput('/roll')).toEqual({ name: 'roll', rest: '' });
    expect(parseSlashInput('hello /roll')).toBeUndefined();
    expect(parseSlashInput('// comment')).toBeUndefined();
  });

  it('types options by Discord’s option types, in the command’s order', () => {
    const declared = [
      { name: 'who', type: 6, description: 'x' },
      { name: 'n', type: 10, description: 'x' },
      { name: 'kind', type: 3, description: 'x', choices: [{ name: 'Big', value: 'big' }] },
    ];
    expect(typeOptions('t', declared, 'n:2.5 who:<@!123456789012345678> kind:Big')).toEqual({
      ok: true,
      options: [
        { name: 'who', type: 6, value: '123456789012345678' },
        { name: 'n', type: 10, value: 2.5 },
        { name: 'kind', type: 3, value: 'big' },
      ],
    });
    expect(typeOptions('t', declared, 'kind:small')).toEqual({ ok: false, message: 'The option kind of /t must be one of: Big.' });
    expect(typeOptions('t', declared, 'who:someone')).toMatchObject({ ok: false });
    expect(typeOptions('t', declared, 'n:1 n:2')).toEqual({ ok: false, message: 'The option n of /t is given twice.' });
    expect(typeOptions('t', declared, 'just words')).toMatchObject({ ok: false });
  });
});
