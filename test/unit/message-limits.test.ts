import type { TSchema } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import { MessageLimits } from '../../src/modules/messages/message-limits.js';
import { BotMessageBody } from '../../src/modules/messages/dms.schemas.js';
import { EmbedResourceBody } from '../../src/modules/resources/resources.schemas.js';
import { EditMessageBody, EmbedBody, ExecuteBody, PatchWebhookByTokenBody } from '../../src/modules/webhooks/webhooks.schemas.js';

/** Every maxLength / maxItems / maximum of a schema, by the path of its field (`embeds[].title`). */
function limitsOf(schema: TSchema, path = '', found: Record<string, number> = {}): Record<string, number> {
  for (const keyword of ['maxLength', 'maxItems', 'maximum'] as const) {
    const value: unknown = schema[keyword];
    if (typeof value === 'number') found[`${path || '(body)'} ${keyword}`] = value;
  }
  const properties = schema['properties'] as Record<string, TSchema> | undefined;
  for (const [key, child] of Object.entries(properties ?? {})) limitsOf(child, path ? `${path}.${key}` : key, found);
  const items = schema['items'] as TSchema | undefined;
  if (items) limitsOf(items, `${path}[]`, found);
  for (const member of (schema['anyOf'] as TSchema[] | undefined) ?? []) limitsOf(member, path, found);
  return found;
}

/** The limits of one embed, under `prefix`, as the parser (embed.ts) enforces them. */
function embedLimits(prefix: string, urls: string[]): Record<string, number> {
  const expected: Record<string, number> = {
    [`${prefix}.title maxLength`]: MessageLimits.title,
    [`${prefix}.description maxLength`]: MessageLimits.description,
    [`${prefix}.color maximum`]: MessageLimits.color,
    [`${prefix}.footer.text maxLength`]: MessageLimits.footerText,
    [`${prefix}.author.name maxLength`]: MessageLimits.authorName,
    [`${prefix}.fields maxItems`]: MessageLimits.fields,
    [`${prefix}.fields[].name maxLength`]: MessageLimits.fieldName,
    [`${prefix}.fields[].value maxLength`]: MessageLimits.fieldValue,
  };
  for (const url of urls) expected[`${prefix}.${url} maxLength`] = MessageLimits.url;
  return expected;
}

const executeEmbedUrls = ['url', 'footer.iconUrl', 'image.url', 'thumbnail.url', 'author.url', 'author.iconUrl'];

describe('the OpenAPI message schemas state the limits the parser enforces (MessageLimits, SPEC §8)', () => {
  it('every limit of the execute body is the MessageLimits entry of its field', () => {
    expect(limitsOf(ExecuteBody)).toEqual({
      'content maxLength': MessageLimits.content,
      'embeds maxItems': MessageLimits.embeds,
      'username maxLength': MessageLimits.username,
      ...embedLimits('embeds[]', executeEmbedUrls),
    });
  });

  it('every limit of the edit body is the MessageLimits entry of its field', () => {
    expect(limitsOf(EditMessageBody)).toEqual({ 'embeds maxItems': MessageLimits.embeds, ...embedLimits('embeds[]', executeEmbedUrls) });
  });

  it('an embed as returned (Discord names) carries the same limits as an embed as sent', () => {
    const returnedUrls = ['url', 'footer.icon_url', 'footer.proxy_icon_url', 'image.url', 'image.proxy_url', 'thumbnail.url', 'thumbnail.proxy_url', 'author.url', 'author.icon_url', 'author.proxy_icon_url'];
    expect(limitsOf(EmbedResourceBody, 'embed')).toEqual(embedLimits('embed', returnedUrls));
    expect(limitsOf(EmbedBody, 'embed')).toEqual(embedLimits('embed', executeEmbedUrls));
  });

  it('a webhook name set by token is limited like a username override', () => {
    expect(limitsOf(PatchWebhookByTokenBody)).toEqual({ 'name maxLength': MessageLimits.username });
  });

  it('the prose of the bot message schema quotes the same limits', () => {
    const properties = BotMessageBody.properties as Record<string, TSchema>;
    expect(properties['content']?.description).toContain(`up to ${MessageLimits.content} Unicode code points`);
    expect(properties['embeds']?.description).toContain(`Up to ${MessageLimits.embeds} embed objects`);
  });
});
