"""
What Gatehouse answered when discord.py expected a refusal, for the client scripts beside this
file: None when the call succeeded, else the HTTPException's class, status and Discord code.
"""
import discord


async def refusal(awaitable):
    try:
        await awaitable
        return None
    except discord.HTTPException as error:
        return {'class': type(error).__name__, 'status': error.status, 'code': error.code}
