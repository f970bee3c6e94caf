"""The MVP demo agent (seed 001 §15). Its code lives in the package, ``lineup.sdk.demo``,
so that ``lineup demo-agent`` can run it; read it there as the fuller SDK example.

    python examples/demo_agent.py --hub http://127.0.0.1:8000 --code ABCD-EFGH
"""

import sys

from lineup.sdk.demo import run

if __name__ == "__main__":
    sys.exit(run())
