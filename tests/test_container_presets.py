"""The seed steps that start or inspect what the repro runs in: docker inspect / docker logs of its
container after the run, and rocgdb's `catch throw` with the backtrace at the throw (fake tools on
PATH print the documented formats)."""

import json
import os
import shutil
import sys
from pathlib import Path

import pytest
from conftest import run_cli

from dbglog.diagnose import evidence as E
from dbglog.run import captures, runner
from dbglog.util.errors import DbglogError

FAKE = Path(__file__).parent / "fixtures" / "fake_tools"


@pytest.mark.parametrize("cmd, container, want", [
    (["docker", "run", "--rm", "-it", "--gpus", "all", "--name", "trial", "img", "python", "x.py"], None,
     {"container": "trial", "how": "docker run --name", "removed": True}),
    (["sudo", "docker", "exec", "-it", "-e", "A=1", "box", "python", "x.py"], None,
     {"container": "box", "how": "docker exec"}),
    (["docker", "container", "run", "--shm-size=1g", "-d", "rocm/pytorch", "python"], None,
     {"image": "rocm/pytorch", "how": "docker run"}),
    (["docker", "run", "--cidfile", "/tmp/cid", "img"], None, {"cidfile": "/tmp/cid", "how": "docker run --cidfile"}),
    (["python", "x.py"], "dev", {"container": "dev", "how": "--container"}),
    (["python", "docker", "run"], None, None),
    (["docker", "ps"], None, None),
])
def test_the_container_a_command_runs_in_is_read_from_its_docker_command_line(cmd, container, want):
    assert captures.docker_target(cmd, container) == want


def test_docker_inspect_says_how_the_container_ended_and_what_gpu_jobs_trip_over():
    e = E.parse_docker_inspect(os.popen(f"{FAKE / 'docker'} inspect trial").read())
    assert e["summary"] == "container trial (nvcr.io/nvidia/pytorch:24.05-py3): exited, exit code 137, OOM-killed"
    text = "\n".join(e["findings"])
    assert "OOMKilled" in text and "/dev/shm is 64 MiB" in text and "--gpus all" in text and "16.0 GiB" in text
    assert E.parse_docker_inspect('[{"Id": "sha256:1", "RepoTags": []}]') is None  # an image's record


def fake_bin(tmp_path, monkeypatch, *tools: Path) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for t in tools:
        shutil.copy(t, bin_dir / t.name)
    monkeypatch.setenv("PATH", str(bin_dir) + os.pathsep + os.environ["PATH"])
    return bin_dir


def test_a_repro_in_a_docker_run_gets_its_container_inspected_and_its_logs_kept(tmp_path, monkeypatch):
    fake_bin(tmp_path, monkeypatch, FAKE / "docker")
    log = tmp_path / "docker.calls"
    monkeypatch.setenv("FAKE_DOCKER_LOG", str(log))
    r = runner.run(["docker", "run", "--rm", "--gpus", "all", "--name", "trial", "img", sys.executable, "-c",
                    "import sys; print('step 1'); sys.exit(3)"],
                   run_dir=tmp_path / runner.new_run_id(), echo=False, git_info=False)
    caps = {c["name"]: c for c in r.captures}
    assert caps["docker:inspect"]["status"] == "ok" and caps["docker:logs"]["status"] == "ok"
    assert "Killed" in Path(caps["docker:logs"]["path"]).read_text()
    assert "inspect trial" in log.read_text() and "logs --timestamps --tail 5000 trial" in log.read_text()
    (dock,) = [e for e in r.evidence if e["kind"] == "docker"]
    assert dock["oom_killed"] and dock["container"] == "trial"


def test_a_docker_run_without_a_name_is_inspected_as_a_labelled_guess(tmp_path, monkeypatch):
    fake_bin(tmp_path, monkeypatch, FAKE / "docker")
    r = runner.run(["docker", "run", "img", sys.executable, "-c", "pass"], run_dir=tmp_path / runner.new_run_id(),
                   echo=False, git_info=False)
    caps = {c["name"]: c for c in r.captures}
    assert caps["docker:inspect"]["container"] == "4f2a9c1e0b7d"
    assert caps["docker:inspect"]["note"].startswith("a guess: the latest container of image img")


def test_the_container_option_names_a_container_the_command_does_not(tmp_path, monkeypatch):
    fake_bin(tmp_path, monkeypatch, FAKE / "docker")
    log = tmp_path / "docker.calls"
    monkeypatch.setenv("FAKE_DOCKER_LOG", str(log))
    r = runner.run([sys.executable, "-c", "pass"], run_dir=tmp_path / runner.new_run_id(), echo=False,
                   git_info=False, container="dev-box")
    assert {c["name"] for c in r.captures} >= {"docker:inspect", "docker:logs"}
    assert "inspect dev-box" in log.read_text()


def test_rocgdb_throw_starts_the_repro_under_rocgdb_and_names_where_it_threw(tmp_path, monkeypatch):
    fake_bin(tmp_path, monkeypatch, FAKE / "throw" / "rocgdb")
    log = tmp_path / "rocgdb.calls"
    monkeypatch.setenv("FAKE_ROCGDB_LOG", str(log))
    r = runner.run([sys.executable, "-c", "pass"], run_dir=tmp_path / runner.new_run_id(), echo=False,
                   git_info=False, captures=["rocgdb-throw"])
    calls = log.read_text()
    assert f"-batch -x {r.paths['output'].rsplit('/', 1)[0]}/rocgdb-throw.gdb --args {sys.executable} -c pass" in calls
    assert "catch throw\nrun\n" in calls and "  bt\n" in calls
    assert r.outcome == "fail" and r.exit_code == 1
    (throw,) = [e for e in r.evidence if e["kind"] == "cpp-throw"]
    assert throw["summary"] == ("C++ exception thrown in at::native::index_kernel_impl "
                                "(/pytorch/aten/src/ATen/native/hip/IndexKernel.hip:212)")


def test_rocgdb_throw_is_refused_in_one_line_without_rocgdb(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # (no rocgdb anywhere)
    with pytest.raises(DbglogError, match="rocgdb, which is not installed"):
        captures.check(["rocgdb-throw"], {"PATH": str(tmp_path)})


def test_the_environment_snapshot_keeps_how_the_gpus_are_connected(tmp_path, monkeypatch):
    from dbglog.run import envinfo

    fake_bin(tmp_path, monkeypatch, FAKE / "nvidia-smi", FAKE / "rocm-smi")
    topo = envinfo._topology(10.0)
    assert "GPU0\t X \tNV12" in topo["nvidia_topology"]
    assert "Link Type between two GPUs" in topo["amd_topology"] and "XGMI" in topo["amd_topology"]


def test_dbglog_run_takes_the_container_option(workdir, tmp_path):
    bin_dir = tmp_path / "fakebin"
    bin_dir.mkdir()
    shutil.copy(FAKE / "docker", bin_dir / "docker")
    r = run_cli("run", "--json", "--container", "dev-box", "--", sys.executable, "-c", "pass", cwd=workdir,
                env={"PATH": str(bin_dir) + os.pathsep + os.environ["PATH"], "FAKE_DOCKER_LOG": str(tmp_path / "calls")})
    caps = {c["name"]: c for c in json.loads(r.stdout)["captures"]}
    assert caps["docker:inspect"]["container"] == "dev-box", r.stderr


def test_a_container_docker_run_rm_removed_is_said_to_be_gone(tmp_path, monkeypatch):
    fake_bin(tmp_path, monkeypatch, FAKE / "docker")
    r = runner.run(["docker", "run", "--rm", "--name", "gone", "img", sys.executable, "-c", "pass"],
                   run_dir=tmp_path / runner.new_run_id(), echo=False, git_info=False)
    caps = {c["name"]: c for c in r.captures}
    assert caps["docker:inspect"]["status"] == "failed"
    assert "the container is gone (docker run --rm removes it" in caps["docker:inspect"]["note"]
