"""Several registry versions side by side: routing by domain / task type, rollout and rollback, the CLI.

Versions v1 and v2 are two tiny models with different weights (so different greedy answers);
every routed answer is checked against the in-process backend of the version it names.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys

from serve_helpers import call, serving
from typer.testing import CliRunner

from posttrain.cli.main import app
from posttrain.inference.base import SamplingParams
from posttrain.inference.openai_compat import OpenAICompatBackend
from posttrain.models.versions import VersionRegistry
from posttrain.serve import ServeSpec

CHAT = [{"role": "user", "content": "31+4="}]
GREEDY = SamplingParams(greedy=True, max_new_tokens=10)


def _greedy(local, version):
    return list(local[version].generate([CHAT], GREEDY)[0][0].token_ids_T)


def _ask(url, headers=None, **body):
    status, answer, got = call(url, "/v1/chat/completions",
                               {"messages": CHAT, "temperature": 0, "max_tokens": 10,
                                "return_token_ids": True, **body}, headers)
    assert status == 200, answer
    return answer["model"], answer["choices"][0]["token_ids"], got["x-posttrain-route"]


def test_routes_by_domain_task_type_and_pin(registry, local):
    assert _greedy(local, "v1") != _greedy(local, "v2")  # the two versions are distinguishable
    # v2 is loaded because a route names it
    spec = ServeSpec(versions=["v1"], registry=registry,
                     routes={"math": "v2", "fast": "v2", "math.mul": "v1"})
    with serving(spec) as (url, _):
        v1, v2 = ("v1", _greedy(local, "v1")), ("v2", _greedy(local, "v2"))
        assert _ask(url) == (*v1, "default")  # empty channel: the first version given
        assert _ask(url, metadata={"domain": "math.add-v1"}) == (*v2, "route:math")
        assert _ask(url, metadata={"domain": "math.mul-v1"}) == (*v1, "route:math.mul")
        assert _ask(url, {"X-Posttrain-Domain": "math.div"}) == (*v2, "route:math")
        assert _ask(url, {"X-Posttrain-Task-Type": "fast"}) == (*v2, "route:fast")
        assert _ask(url, metadata={"domain": "code.fn-v1", "task_type": "slow"}) == (*v1, "default")
        assert _ask(url, model="v1", metadata={"domain": "math.add"}) == (*v1, "model")  # a pin wins
        # posttrain's own client routes by metadata too (extra_body), and records v2's tokens
        client = OpenAICompatBackend(url, extra_body={"metadata": {"domain": "math.add-v1"}})
        assert list(client.generate([CHAT], GREEDY)[0][0].token_ids_T) == v2[1]


def test_rollout_beside_the_old_version_then_rollback(registry, local):
    with VersionRegistry(registry) as reg:
        reg.promote("v1")
    runner = CliRunner()
    spec = ServeSpec(versions=["v1"], registry=registry, refresh_s=0.0, routes={"canary": "v1"})
    with serving(spec) as (url, router):
        assert _ask(url)[:2] == ("v1", _greedy(local, "v1"))
        # Roll out: promote v2 with the CLI; the running server loads it and makes it the default.
        done = runner.invoke(app, ["models", "promote", "v2", "--registry", str(registry)])
        assert done.exit_code == 0, done.output
        assert _ask(url) == ("v2", _greedy(local, "v2"), "default")
        assert _ask(url, model="v1")[:2] == ("v1", _greedy(local, "v1"))  # the old one still serves
        status, routes, _ = call(url, "/v1/posttrain/routes")
        assert routes["default"] == "v2" and routes["default_from"] == "channel:serving"
        assert [m["id"] for m in call(url, "/v1/models")[1]["data"]] == ["policy", "v1", "v2"]
        # Roll back by one command: the default is v1 again, without a restart.
        done = runner.invoke(app, ["models", "rollback", "--registry", str(registry)])
        assert done.exit_code == 0, done.output
        assert _ask(url) == ("v1", _greedy(local, "v1"), "default")
        assert router.describe()["default"] == "v1"


def test_cli_refuses_bad_options_before_loading(folders):
    runner = CliRunner()
    remote = runner.invoke(app, ["serve", folders["v1"], "--host", "0.0.0.0"])
    assert remote.exit_code == 2 and "--allow-remote" in remote.output
    bad = runner.invoke(app, ["serve", folders["v1"], "--route", "math"])
    assert bad.exit_code == 2 and "KEY=VERSION" in bad.output
    unknown = runner.invoke(app, ["serve", folders["v1"], "--route", "math=v7", "--port", "0"])
    assert unknown.exit_code == 2 and "'v7' is not a served version" in unknown.output


def test_cli_serves_a_folder_on_loopback(folders, local):
    env = {**os.environ, "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}
    # Ctrl-C must reach the server even when this test runs in a background job (a
    # non-interactive shell starts those with SIGINT ignored, and the child would inherit it)
    proc = subprocess.Popen([sys.executable, "-m", "posttrain", "serve", folders["v2"], "--name", "tiny",
                             "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            text=True, env=env,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        line = proc.stdout.readline()
        match = re.match(r"posttrain serve: (http://127\.0\.0\.1:\d+)/v1 default=tiny ", line)
        assert match, line
        url = match.group(1)
        assert _ask(url)[:2] == ("tiny", _greedy(local, "v2"))
    finally:
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 0


def test_a_promoted_version_that_cannot_load_is_503_and_rollback_recovers(registry, folders, tmp_path):
    broken = tmp_path / "v3"
    shutil.copytree(folders["v2"], broken)
    with VersionRegistry(registry) as reg:
        reg.register_posttrain(broken, base_id="base", run_id="run-v3", config_hash="c0", version_id="v3")
        reg.promote("v1")
    with serving(ServeSpec(versions=["v1"], registry=registry, refresh_s=0.0)) as (url, _):
        with VersionRegistry(registry) as reg:
            reg.promote("v3")
        (broken / "config.json").unlink()  # the folder went bad after registration
        status, answer, _ = call(url, "/v1/chat/completions", {"messages": CHAT, "max_tokens": 2})
        assert status == 503 and "v3" in answer["error"]["message"]
        with VersionRegistry(registry) as reg:
            reg.rollback()
        assert _ask(url)[0] == "v1"
