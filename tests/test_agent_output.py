"""Output an agent can act on (issue 16): the shipped agent guide, what recording commands say they
recorded and what to run next, and `tried` on paraphrases of what was tried."""

import json
import re

from conftest import InProcess  # noqa: F401  (the dbg fixture's helper)


def test_agent_guide_text_and_json(dbg):
    code, text, err = dbg("agent-guide")
    assert code == 0 and err == ""
    assert text.startswith("---\nname: dbglog\ndescription: ")  # a skill file's front matter
    for step in ("Check before you act", "Record every experiment", "Narrow down", "Close"):
        assert step in text
    code, out, _ = dbg("agent-guide", "--json")
    assert code == 0 and json.loads(out)["guide"] == text
    # every command the guide names exists (the guide cannot drift from the CLI unnoticed)
    from dbglog.cli import cli

    named = set(re.findall(r"`dbglog ([a-z-]+)", text))
    assert {"tried", "run", "attempt", "bisect", "status", "diff", "next"} <= named
    assert named <= set(cli.commands), named - set(cli.commands)
