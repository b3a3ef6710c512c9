"""
Unmodified discord.py registering application commands (issue #40 §2), driven by
test/e2e/discordpy-commands.test.ts: log in (REST only, no gateway), declare commands on an
app_commands.CommandTree (global ones, with default_permissions and guild_only, and one for a
single server), sync the global tree and the server's, and fetch both back. Only the API base
(discord.http.Route.BASE) is changed. Reads a JSON job on stdin and prints one JSON report on
stdout; the assertions are in the TypeScript test.
"""
import asyncio
import json
import sys

import discord
from discord import app_commands

from discordpy_refusal import refusal


def command_facts(c):
    return {
        'id': c.id,
        'name': c.name,
        'description': c.description,
        'guild_id': c.guild_id,
        'options': [o.name for o in c.options],
        'default_member_permissions': c.default_member_permissions.value if c.default_member_permissions is not None else None,
        'dm_permission': c.dm_permission,
    }


async def main():
    job = json.loads(sys.stdin.read())
    discord.http.Route.BASE = f"{job['base']}/api/v1"
    client = discord.Client(intents=discord.Intents.none())
    tree = app_commands.CommandTree(client)
    guild = discord.Object(id=int(job['guild_id']))

    @tree.command(name='roll', description='Rolls a die')
    @app_commands.describe(sides='How many sides')
    async def roll(interaction: discord.Interaction, sides: int):
        pass

    @tree.command(name='purge', description='Deletes messages')
    @app_commands.default_permissions(manage_messages=True)
    @app_commands.guild_only()
    async def purge(interaction: discord.Interaction):
        pass

    @tree.command(name='setup', description='Sets this server up', guild=guild)
    async def setup(interaction: discord.Interaction):
        pass

    report = {'version': discord.__version__}
    try:
        await client.login(job['token'])
        report['application_id'] = client.application_id
        report['synced_global'] = sorted((command_facts(c) for c in await tree.sync()), key=lambda c: c['name'])
        report['synced_guild'] = [command_facts(c) for c in await tree.sync(guild=guild)]
        report['fetched_global'] = sorted(c.name for c in await tree.fetch_commands())
        report['fetched_guild'] = sorted(c.name for c in await tree.fetch_commands(guild=guild))
        report['foreign_guild'] = await refusal(tree.sync(guild=discord.Object(id=int(job['foreign_guild_id']))))
    finally:
        await client.close()
    print(json.dumps(report))


asyncio.run(main())
