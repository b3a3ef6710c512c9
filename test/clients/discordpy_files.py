"""Drives UNMODIFIED discord.py (Debian's python3-discord): SyncWebhook.send with discord.File.

Issue #42: files through the webhook URL exactly as discord.py sends them (multipart/form-data,
payload_json with Content-Type application/json, then files[n]). Only the API base
(discord.http.Route.BASE) is changed. Reads {"base", "id", "token", "png_hex"} on stdin and prints
what discord.py built from the answer; test/e2e/attachments-clients.test.ts asserts on it.
"""

import io
import json
import sys

import discord
import discord.http
import requests


def main():
    cfg = json.load(sys.stdin)
    discord.http.Route.BASE = f"{cfg['base']}/api/v1"
    hook = discord.SyncWebhook.partial(int(cfg['id']), cfg['token'], session=requests.Session())
    png = bytes.fromhex(cfg['png_hex'])
    message = hook.send(
        'Nightly chart',
        files=[
            discord.File(io.BytesIO(png), filename='chart.png', description='Error rate'),
            discord.File(io.BytesIO(b'all tests passed\n'), filename='summary.txt'),
        ],
        wait=True,
    )
    facts = {
        'id': str(message.id),
        'content': message.content,
        'attachments': [
            {
                'id': str(a.id),
                'filename': a.filename,
                'size': a.size,
                'url': a.url,
                'proxy_url': a.proxy_url,
                'content_type': a.content_type,
                'width': a.width,
                'height': a.height,
                'description': a.description,
                'is_image': a.width is not None,
            }
            for a in message.attachments
        ],
    }
    # discord.py's own download of the file (Attachment.read goes through the same session type).
    facts['downloaded_hex'] = requests.get(message.attachments[0].url, timeout=10).content.hex()
    json.dump(facts, sys.stdout)


main()
