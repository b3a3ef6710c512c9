// The request bodies of the webhook scenarios, shared by bench/run.mjs and bench/instructions.mjs.

/** ~100 bytes of content, as a small notification would be. */
export const SMALL_BODY = JSON.stringify({ content: 'Deploy #4821 of gatehouse finished on production in 42 s; 0 errors, 3 warnings. All checks green.' });
export const EMBED_BODY = JSON.stringify({
  content: 'Build report',
  embeds: [
    {
      title: 'Build #4821 passed',
      description: 'All 1,204 tests passed on main in 3 min 12 s. Coverage went from 91.2 % to 91.4 %.',
      fields: [
        { name: 'Branch', value: 'main', inline: true },
        { name: 'Commit', value: '0b32cfc', inline: true },
        { name: 'Duration', value: '3 min 12 s', inline: true },
      ],
    },
  ],
});
