import { describe, expect, it } from 'vitest';
import { botBucketName, botRouteBucketKey, botRouteKind, majorParameter } from '../../src/modules/applications/bot-rate-limit.js';

describe('bot rate-limit buckets (issue #40 §4, docs/bots.md "Rate limits")', () => {
  it('posting, editing and deleting messages have buckets of their own; every other GET is a read, every other change a write', () => {
    expect(botRouteKind('POST', '/api/v1/channels/:channelId/messages')).toBe('message-create');
    expect(botRouteKind('PATCH', '/api/v1/channels/:channelId/messages/:messageId')).toBe('message-edit');
    expect(botRouteKind('DELETE', '/api/v1/channels/:channelId/messages/:messageId')).toBe('message-delete');
    expect(botRouteKind('GET', '/api/v1/channels/:channelId/messages')).toBe('read');
    expect(botRouteKind('GET', '/api/v1/guilds/:guildId')).toBe('read');
    expect(botRouteKind('POST', '/api/v1/channels/:channelId/webhooks')).toBe('write');
    expect(botRouteKind('PUT', '/api/v1/applications/:applicationId/commands')).toBe('write');
  });

  it("the major parameter is the path's channel, server or webhook, as Discord keys its buckets", () => {
    expect(majorParameter('/api/v1/channels/:channelId/messages', { channelId: '1' })).toBe('1');
    expect(majorParameter('/api/v1/guilds/:guildId/members/:userId', { guildId: '2', userId: '3' })).toBe('2');
    expect(majorParameter('/api/v1/webhooks/:id', { id: '4' })).toBe('4');
    expect(majorParameter('/api/v1/users/:userId', { userId: '5' })).toBe('');
    expect(majorParameter('/api/v1/users/@me', undefined)).toBe('');
  });

  it('a route bucket is per bot and major parameter; its name is the same for every bot and channel', () => {
    expect(botRouteBucketKey('10', 'GET', '/api/v1/channels/:channelId', '1')).not.toBe(botRouteBucketKey('11', 'GET', '/api/v1/channels/:channelId', '1'));
    expect(botRouteBucketKey('10', 'GET', '/api/v1/channels/:channelId', '1')).not.toBe(botRouteBucketKey('10', 'GET', '/api/v1/channels/:channelId', '2'));
    expect(botBucketName('GET', '/api/v1/channels/:channelId')).toMatch(/^[0-9a-f]{32}$/);
    expect(botBucketName('GET', '/api/v1/channels/:channelId')).not.toBe(botBucketName('GET', '/api/v1/guilds/:guildId'));
  });
});
