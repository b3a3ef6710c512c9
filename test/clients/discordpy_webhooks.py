"""Drives UNMODIFIED discord.py (Debian's python3-discord) against Gatehouse's webhook URL routes.

DESIGN §6: compatibility is tested with the real client. Only discord.py's public configuration
is changed: the API base (discord.http.Route.BASE) and the CDN base (discord.Asset.BASE).
Reads one JSON object on stdin: {"base": ..., "sync": {"id", "token"}, "async": {...},
"busy": {...}}. Prints one JSON object of observations on stdout; test/e2e/discordpy.test.ts
asserts on them. Every exception a step does not expect ends the script with a traceback.
"""

import asyncio
import json
import logging
import sys
import time

import aiohttp
import discord
import discord.http
import requests


class RateLimitLog(logging.Handler):
    """Counts discord.py's "is rate limited. Retrying in" warnings: the 429s it waited out."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.waits = []

    def emit(self, record):
        if 'rate limited' in record.getMessage():
            self.waits.append(record.getMessage())


def message_facts(m, sent_before, sent_after):
    embed = m.embeds[0] if m.embeds else None
    return {
        'type': type(m).__name__,
        'id': m.id,
        'content': m.content,
        'channel_id': m.channel.id,
        'webhook_id': m.webhook_id,
        'author_id': m.author.id,
        'author_name': m.author.name,
        'author_bot': m.author.bot,
        'author_discriminator': m.author.discriminator,
        'author_avatar_url': m.author.display_avatar.url,
        'created_at': m.created_at.timestamp(),
        'sent_between': [sent_before, sent_after],
        'edited_at': m.edited_at.timestamp() if m.edited_at else None,
        'pinned': m.pinned,
        'tts': m.tts,
        'mention_everyone': m.mention_everyone,
        'mentions': len(m.mentions),
        'attachments': len(m.attachments),
        'message_type': m.type.value,
        'embed': None
        if embed is None
        else {
            'title': embed.title,
            'description': embed.description,
            'color': embed.color.value if embed.color else None,
            'footer_text': embed.footer.text,
            'footer_icon_url': embed.footer.icon_url,
            'author_name': embed.author.name,
            'author_icon_url': embed.author.icon_url,
            'fields': [[f.name, f.value, f.inline] for f in embed.fields],
        },
    }


def webhook_facts(w):
    return {
        'id': w.id,
        'name': w.name,
        'type': w.type.value,
        'channel_id': w.channel_id,
        'guild_id': w.guild_id,
        'avatar_url': w.display_avatar.url,
        'has_token': w.token is not None,
    }


def error_facts(e):
    return {'class': type(e).__name__, 'status': e.status, 'code': e.code, 'text': e.text}


def embed():
    return (
        discord.Embed(title='Build 42', description='All green', color=0x5865F2)
        .add_field(name='Env', value='prod', inline=True)
        .set_footer(text='CI', icon_url='https://img.example/footer.png')
        .set_author(name='Pipeline', icon_url='https://img.example/author.png')
    )


def image_at(url):
    """What the CDN URL discord.py built answers, redirects not followed."""
    r = requests.get(url, allow_redirects=False, timeout=10)
    return {'status': r.status_code, 'location': r.headers.get('Location'), 'content_type': r.headers.get('Content-Type'), 'body_hex': r.content.hex()}


def run_sync(base, cfg):
    out = {}
    session = requests.Session()
    hook = discord.SyncWebhook.partial(int(cfg['id']), cfg['token'], session=session)
    out['send'] = hook.send('Hello from discord.py (sync)')
    before = time.time()
    msg = hook.send('With an embed', embed=embed(), wait=True)
    after = time.time()
    out['message'] = message_facts(msg, before, after)
    out['avatar_image'] = image_at(msg.author.display_avatar.url)
    fetched = hook.fetch()
    out['fetch'] = webhook_facts(fetched)
    out['webhook_avatar_image'] = image_at(fetched.display_avatar.url)
    edited = hook.edit_message(msg.id, content='Edited (sync)')
    out['edit_message'] = {'content': edited.content, 'edited_at': edited.edited_at.timestamp() if edited.edited_at else None, 'id': edited.id}
    got = hook.fetch_message(msg.id)
    out['fetch_message'] = {'content': got.content, 'id': got.id, 'embeds': len(got.embeds)}
    hook.delete_message(msg.id)
    try:
        hook.fetch_message(msg.id)
        out['fetch_deleted'] = None
    except discord.HTTPException as e:
        out['fetch_deleted'] = error_facts(e)
    renamed = hook.edit(name='Renamed (sync)')
    out['edit'] = webhook_facts(renamed)
    try:
        hook.send('')
        out['empty'] = None
    except discord.HTTPException as e:
        out['empty'] = error_facts(e)
    try:
        discord.SyncWebhook.partial(int(cfg['id']), 'ghwt_wrong', session=session).send('x')
        out['wrong_token'] = None
    except discord.HTTPException as e:
        out['wrong_token'] = error_facts(e)
    hook.delete()
    try:
        hook.fetch()
        out['after_delete'] = None
    except discord.HTTPException as e:
        out['after_delete'] = error_facts(e)
    return out


async def run_async(base, cfg):
    out = {}
    async with aiohttp.ClientSession() as session:
        hook = discord.Webhook.partial(int(cfg['id']), cfg['token'], session=session)
        out['send'] = await hook.send('Hello from discord.py (async)')
        before = time.time()
        msg = await hook.send('With an embed', embed=embed(), wait=True)
        after = time.time()
        out['message'] = message_facts(msg, before, after)
        fetched = await hook.fetch()
        out['fetch'] = webhook_facts(fetched)
        edited = await hook.edit_message(msg.id, content='Edited (async)')
        out['edit_message'] = {'content': edited.content, 'edited_at': edited.edited_at.timestamp() if edited.edited_at else None, 'id': edited.id}
        got = await hook.fetch_message(msg.id)
        out['fetch_message'] = {'content': got.content, 'id': got.id, 'embeds': len(got.embeds)}
        await hook.delete_message(msg.id)
        try:
            await hook.fetch_message(msg.id)
            out['fetch_deleted'] = None
        except discord.HTTPException as e:
            out['fetch_deleted'] = error_facts(e)
        renamed = await hook.edit(name='Renamed (async)')
        out['edit'] = webhook_facts(renamed)
        try:
            await discord.Webhook.partial(int(cfg['id']), 'ghwt_wrong', session=session).send('x')
            out['wrong_token'] = None
        except discord.HTTPException as e:
            out['wrong_token'] = error_facts(e)
        await hook.delete()
        try:
            await hook.fetch()
            out['after_delete'] = None
        except discord.HTTPException as e:
            out['after_delete'] = error_facts(e)
    return out


def run_rate_limit(base, cfg, log):
    """Empties the webhook's bucket behind discord.py's back, so its next send meets a real 429."""
    url = f"{base}/api/v1/webhooks/{cfg['id']}/{cfg['token']}"
    statuses = [requests.post(url, json={'content': f'filler {i}'}, timeout=10).status_code for i in range(11)]
    hook = discord.SyncWebhook.partial(int(cfg['id']), cfg['token'], session=requests.Session())
    waits_before = len(log.waits)
    msg = hook.send('After the wait', wait=True)
    return {'filler_statuses': statuses, 'waits': len(log.waits) - waits_before, 'content': msg.content}


def main():
    cfg = json.load(sys.stdin)
    base = cfg['base']
    discord.http.Route.BASE = f'{base}/api/v1'
    discord.Asset.BASE = base
    log = RateLimitLog()
    logging.getLogger('discord').addHandler(log)
    result = {
        'version': discord.__version__,
        'sync': run_sync(base, cfg['sync']),
        'async': asyncio.run(run_async(base, cfg['async'])),
        'rate_limit': run_rate_limit(base, cfg['busy'], log),
    }
    print(json.dumps(result))


if __name__ == '__main__':
    main()
