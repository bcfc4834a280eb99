"""A refusal that teaches: when the bad end passes once but the investigation's recorded runs of
that very command disagree, `bisect git` says the failure looks intermittent (k of n) and gives
the `--flaky` line to run, instead of "check the command"."""

import json
import subprocess

from conftest import run_cli

FLAKY = "n=$(cat count 2>/dev/null || echo 0); echo $((n + 1)) > count; [ $((n % 2)) = 1 ]\n"


def git(cwd, *args):
    return subprocess.run(["git", "-c", "user.email=t@t", "-c", "user.name=t", *args], cwd=cwd, check=True,
                          capture_output=True, text=True).stdout.strip()


def test_the_refusal_names_flaky_and_the_recorded_failure_rate(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    shas = []
    for i in range(4):
        (repo / "check.sh").write_text(f"# v{i}\nexit 0\n")
        git(repo, "add", "check.sh")
        git(repo, "commit", "-qm", f"v{i}")
        shas.append(git(repo, "rev-parse", "HEAD"))
    assert run_cli("new", "hangs now and then", "--no-env", cwd=repo).returncode == 0
    (repo / "check.sh").write_text(FLAKY)  # the runs the investigation recorded: 4 of 8 failed
    r = run_cli("run", "-q", "--repeat", "8", "--attempt", "baseline", "--", "sh", "check.sh", cwd=repo)
    assert r.returncode == 1, r.stderr
    git(repo, "checkout", "check.sh")
    p = run_cli("bisect", "git", "--json", "--good", shas[0], "--bad", "HEAD", "--", "sh", "check.sh", cwd=repo)
    res = json.loads(p.stdout)
    assert p.returncode == 2 and res["status"] == "refused", p.stderr
    assert "failed 4 of 8" in res["message"] and "intermittent" in res["message"]
    assert "dbglog bisect git" in res["message"] and "--flaky -- sh check.sh" in res["message"]
    text = run_cli("bisect", "git", "--good", shas[0], "--bad", "HEAD", "--", "sh", "check.sh", cwd=repo).stdout
    ends = [ln for ln in text.splitlines() if ln.startswith("  bad end ")]
    assert len(ends) == 1 and ends[0].endswith(": good — passed"), text  # (it read "good — pass passed")


def test_toggles_passing_both_ways_cites_the_recorded_rate_and_flaky(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    assert run_cli("new", "crashes now and then", "--no-env", cwd=ws).returncode == 0
    (ws / "check.sh").write_text(FLAKY)
    assert run_cli("run", "-q", "--repeat", "8", "--attempt", "baseline", "--", "sh", "check.sh", cwd=ws).returncode == 1
    (ws / "check.sh").write_text("exit 0\n")
    p = run_cli("bisect", "toggles", "--json", "--env", "X=1", "--", "sh", "check.sh", cwd=ws)
    res = json.loads(p.stdout)
    assert p.returncode == 2 and res["status"] == "refused", p.stderr
    assert "failed 4 of 8" in res["message"] and "intermittent" in res["message"]
    assert "--flaky -- sh check.sh" in res["message"]
