import { describe, expect, it } from 'vitest';
import { composerCommands } from '../../src/modules/interactions/interactions.js';

describe('the composer’s / list (issue #40 §2)', () => {
  it('lists each command name once, the first app’s (the one a typed /name runs), ordered by name', () => {
    const listed = composerCommands([
      { appName: 'Dice', commands: [{ name: 'roll', description: 'Rolls dice', options: [] }] },
      { appName: 'Cards', commands: [{ name: 'roll', description: 'Rolls a card', options: [] }, { name: 'draw', description: 'Draws a card', options: [] }] },
    ]);
    expect(listed.map((c) => [c.name, c.app])).toEqual([
      ['draw', 'Cards'],
      ['roll', 'Dice'],
    ]);
  });

  it('leaves out commands with sub-commands, which cannot be typed in the composer', () => {
    const listed = composerCommands([
      { appName: 'Admin', commands: [{ name: 'config', description: 'Settings', options: [{ name: 'reset', description: 'Resets', type: 1 }] }, { name: 'help', description: 'Helps', options: [] }] },
    ]);
    expect(listed.map((c) => c.name)).toEqual(['help']);
  });

  it('describes each option: what to write, whether it is required, its choices and description', () => {
    const [roll] = composerCommands([
      {
        appName: 'Dice',
        commands: [
          {
            name: 'roll',
            description: 'Rolls dice',
            options: [
              { name: 'sides', description: 'How many sides', type: 4, required: true },
              { name: 'public', description: 'Show everyone', type: 5 },
              { name: 'who', description: 'For whom', type: 6 },
              { name: 'colour', description: 'Of the dice', type: 3, choices: [{ name: 'red', value: 'r' }] },
            ],
          },
        ],
      },
    ]);
    expect(roll?.options).toEqual([
      { name: 'sides', description: 'How many sides', required: true, kind: 'a whole number' },
      { name: 'public', description: 'Show everyone', required: false, kind: 'true or false' },
      { name: 'who', description: 'For whom', required: false, kind: 'a user' },
      { name: 'colour', description: 'Of the dice', required: false, kind: 'text', choices: ['red'] },
    ]);
  });
});
