"""
Unmodified discord.py reading with a bot token (issue #40 §4), driven by
test/e2e/discordpy-bot-reads.test.ts: log in (REST only, no gateway), fetch a channel, its history
(newest first, before, after, around), one message, the server with its roles, and a member.
Only the API base (discord.http.Route.BASE) is changed. Reads a JSON job on stdin and prints one
JSON report on stdout; the assertions are in the TypeScript test.
"""
import asyncio
import json
import sys

import discord

from discordpy_refusal import refusal


def message_facts(m):
    return {'id': m.id, 'content': m.content, 'author_id': m.author.id, 'author_name': m.author.name, 'channel_id': m.channel.id}


async def main():
    job = json.loads(sys.stdin.read())
    discord.http.Route.BASE = f"{job['base']}/api/v1"
    client = discord.Client(intents=discord.Intents.none())
    report = {'version': discord.__version__}
    try:
        await client.login(job['token'])
        report['me'] = {'id': client.user.id, 'bot': client.user.bot}
        channel = await client.fetch_channel(int(job['channel_id']))
        report['channel'] = {'class': type(channel).__name__, 'id': channel.id, 'name': channel.name, 'guild_id': channel.guild.id}
        report['history'] = [m.content async for m in channel.history(limit=None)]
        anchor = discord.Object(id=int(job['anchor_id']))
        report['before'] = [m.content async for m in channel.history(limit=2, before=anchor)]
        report['after'] = [m.content async for m in channel.history(limit=2, after=anchor)]
        report['around'] = [m.content async for m in channel.history(limit=3, around=anchor)]
        report['message'] = message_facts(await channel.fetch_message(int(job['anchor_id'])))
        guild = await client.fetch_guild(int(job['guild_id']))
        report['guild'] = {'id': guild.id, 'name': guild.name, 'owner_id': guild.owner_id, 'roles': sorted(r.name for r in guild.roles)}
        member = await guild.fetch_member(int(job['member_id']))
        report['member'] = {'id': member.id, 'name': member.name, 'roles': sorted(r.id for r in member.roles), 'joined': member.joined_at is not None}
        report['foreign_guild'] = await refusal(client.fetch_guild(int(job['foreign_guild_id'])))
    finally:
        await client.close()
    print(json.dumps(report))


asyncio.run(main())
