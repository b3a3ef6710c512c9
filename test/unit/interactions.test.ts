import { describe, expect, it } from 'vitest';
import { checkAnswer, parseSlashInput, typeOptions } from '../../src/modules/interactions/interactions.js';

const json = (value: unknown) => Buffer.from(JSON.stringify(value));

describe('interaction answers (issue #40 §2, Discord interaction responses)', () => {
  it('type 4 with content is a message; flag 64 makes it ephemeral', () => {
    expect(checkAnswer(200, json({ type: 4, data: { content: 'hi' } }), 'Gatehouse')).toEqual({ kind: 'message', content: 'hi', embeds: [], ephemeral: false });
    expect(checkAnswer(200, json({ type: 4, data: { content: 'hi', flags: 64 } }), 'Gatehouse')).toEqual({ kind: 'message', content: 'hi', embeds: [], ephemeral: true });
  });

  it('not JSON, an unknown type, neither content nor embeds, content over 2000 characters, a bad embed, or a non-2xx status are invalid', () => {
    expect(checkAnswer(200, Buffer.from('nope'), 'Gatehouse')).toMatchObject({ kind: 'invalid', reason: 'its answer is not JSON' });
    expect(checkAnswer(200, json({ type: 9 }), 'Gatehouse')).toMatchObject({ kind: 'invalid' });
    expect(checkAnswer(200, json({ type: 4, data: {} }), 'Gatehouse')).toMatchObject({ kind: 'invalid' });
    expect(checkAnswer(200, json({ type: 4, data: { content: 'é'.repeat(2001) } }), 'Gatehouse')).toMatchObject({ kind: 'invalid', reason: 'its data.content is longer than 2000 characters' });
    expect(checkAnswer(200, json({ type: 4, data: { content: 'é'.repeat(2000) } }), 'Gatehouse')).toMatchObject({ kind: 'message' });
    expect(checkAnswer(200, json({ type: 4, data: {} }), 'Gatehouse')).toMatchObject({ kind: 'invalid', reason: 'its answer of type 4 has neither data.content nor data.embeds' });
    expect(checkAnswer(200, json({ type: 4, data: { embeds: [{ title: 't'.repeat(257) }] } }), 'Gatehouse')).toMatchObject({ kind: 'invalid', reason: expect.stringMatching(/^its data is invalid \(data\.embeds\.0\.title: /) });
    expect(checkAnswer(200, json({ type: 4, data: { embeds: 'nope' } }), 'Gatehouse')).toMatchObject({ kind: 'invalid', reason: expect.stringMatching(/^its data is invalid \(data\.embeds: /) });
    expect(checkAnswer(200, json({ type: 4, data: 'text' }), 'Gatehouse')).toMatchObject({ kind: 'invalid', reason: 'its data is not a JSON object' });
    expect(checkAnswer(500, json({ type: 4, data: { content: 'hi' } }), 'Gatehouse')).toMatchObject({ kind: 'invalid', reason: 'it answered 500, not 200' });
  });

  it('type 4 carries embeds and allowed_mentions as follow-ups do: embeds are kept, allowed_mentions has nothing to allow (mentions never notify)', () => {
    const answer = checkAnswer(200, json({ type: 4, data: { content: 'hi <@1>', embeds: [{ title: 'Roll', description: 'You rolled 4' }], allowed_mentions: { parse: ['everyone'] }, flags: 64 } }), 'Gatehouse');
    expect(answer).toEqual({ kind: 'message', content: 'hi <@1>', embeds: [{ title: 'Roll', description: 'You rolled 4' }], ephemeral: true });
    expect(checkAnswer(200, json({ type: 4, data: { embeds: [{ description: 'only an embed' }] } }), 'Gatehouse')).toMatchObject({ kind: 'message', content: '', embeds: [{ description: 'only an embed' }] });
  });

  it('type 5 is a deferred answer', () => {
    expect(checkAnswer(200, json({ type: 5 }), 'Gatehouse')).toEqual({ kind: 'deferred', ephemeral: false });
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
