/**
 * SPEC §8 and Discord's message and embed limits, all lengths in Unicode code points. The one
 * table both the payload parser (message-payload.ts, embed.ts) and the OpenAPI schemas
 * (webhooks.schemas.ts, resources.schemas.ts, dms.schemas.ts) read, so the document cannot drift
 * from what is enforced; test/unit/message-limits.test.ts walks the schemas against it.
 */
export const MessageLimits = {
  content: 2000,
  embeds: 10,
  embedTotal: 6000,
  title: 256,
  description: 4096,
  fields: 25,
  fieldName: 256,
  fieldValue: 1024,
  footerText: 2048,
  authorName: 256,
  url: 2048,
  username: 80,
  color: 0xffffff,
} as const;
