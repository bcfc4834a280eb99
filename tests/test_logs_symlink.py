"""A symlink in logs/ is not read: it could point at any file outside the workspace."""

from __future__ import annotations

import json

from conftest import run_cli_inproc


def test_a_symlinked_mirror_file_is_neither_read_nor_imported(workdir, tmp_path_factory):
    assert run_cli_inproc(workdir, "new", "real one", "--no-env").returncode == 0
    elsewhere = tmp_path_factory.mktemp("outside") / "other.md"
    # looks exactly like a mirror file, so following the link would import it
    src = next((workdir / "logs").glob("*.md")).read_text(encoding="utf-8")
    elsewhere.write_text(src.replace("real one", "from outside").replace("id: ", "id: x", 1), encoding="utf-8")
    (workdir / "logs" / "linked.md").symlink_to(elsewhere)
    p = run_cli_inproc(workdir, "list", "--json")
    assert p.returncode == 0, p.stderr
    assert [i["title"] for i in json.loads(p.stdout)] == ["real one"]
    assert (workdir / "logs" / "linked.md").is_symlink()  # left as it was
