"""The smallest useful LineUp agent: it echoes tasks and messages back.

python examples/echo_agent.py --hub http://127.0.0.1:8000 --code ABCD-EFGH  # first run
python examples/echo_agent.py                                               # afterwards
"""

from __future__ import annotations

import argparse
import asyncio
import logging

from lineup.sdk import Agent, AgentConfig, MessageContext, TaskContext, pair


async def main() -> None:
    parser = argparse.ArgumentParser(description="Echo tasks and messages back.")
    parser.add_argument("--hub", default="http://127.0.0.1:8000")
    parser.add_argument("--code", help="pairing code (first run only)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO)

    config = await pair(args.hub, args.code, name="echo") if args.code else AgentConfig.load()
    agent = Agent(config)

    @agent.task
    async def echo_task(ctx: TaskContext) -> str:
        await ctx.say(f"You asked: {ctx.title}\n\n{ctx.description or ''}".strip())
        return f"Echoed “{ctx.title}”"

    @agent.on_message
    async def echo_message(message: MessageContext) -> None:
        await message.say(message.content)

    await agent.run()  # until Ctrl-C


if __name__ == "__main__":
    asyncio.run(main())
