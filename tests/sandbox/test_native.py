"""The native front (ptinit), its Python fallback, the upgrade between them, the snippet
server, and the pool's no-op reset. Real bubblewrap, real compiler."""

import os

import pytest

from posttrain.sandbox import Limits, SandboxPool, Timeouts, native
from posttrain.sandbox.isolated import IsolatedSandbox

SMALL = Limits(memory_bytes=128 << 20, pids=64, store_bytes=64 << 20)


def _exe(pid: int) -> str:
    return os.readlink(f"/proc/{pid}/exe")


def test_cold_exec_runs_without_an_interpreter(front):
    with IsolatedSandbox(limits=SMALL) as sb:
        r = sb.exec("echo hi; echo err >&2; exit 3")
        assert (r.status, r.exit_code, r.stdout, r.stderr) == ("nonzero_exit", 3, "hi\n", "err\n")
        assert sb.front == front
        is_python = "python" in os.path.basename(_exe(sb.supervisor_pid))
        assert is_python == (front == "python")  # native: no interpreter was ever started
        fds = sb.exec(["python3", "-c", "import os; print(sorted(os.listdir('/proc/self/fd')))"])
        assert fds.stdout == "['0', '1', '2', '3']\n"  # no control socket, no layer store
        caps = sb.exec("grep -E '^(CapEff|NoNewPrivs|Seccomp):' /proc/self/status").stdout
        assert "CapEff:\t0000000000000000" in caps and "NoNewPrivs:\t1" in caps
        assert "Seccomp:\t2" in caps


def test_upgrade_keeps_the_sandbox(front):
    with IsolatedSandbox(limits=SMALL) as sb:
        sb.exec("echo one > /work/a.txt")
        pid = sb.supervisor_pid
        sb.write_file("b.txt", "two")  # needs the Python supervisor: upgrade in place
        assert sb.front == "python" and sb.supervisor_pid == pid
        assert "python" in os.path.basename(_exe(pid))
        assert sb.exec("cat a.txt b.txt").stdout == "one\ntwo"
        s0 = sb.snapshot()
        sb.exec("rm a.txt")
        sb.restore(s0)
        assert sb.exec("ls").stdout == "a.txt\nb.txt\n"


def test_root_and_dev_are_read_only(front):
    with IsolatedSandbox(limits=SMALL) as sb:
        r = sb.exec("for p in /x /dev/x /etc/x /home/x; do "
                    "(echo hi > $p) 2>/dev/null && echo WROTE $p; done; echo ok > /work/w && echo work")
        assert r.stdout == "work\n", r.stdout


def test_snippets_fork_from_a_confined_server(front):
    with IsolatedSandbox(limits=SMALL) as sb:
        assert sb.run_python("import builtins; builtins.LEAK = 1; print('set')").stdout == "set\n"
        r = sb.run_python("import builtins; print(hasattr(builtins, 'LEAK'))")
        assert r.stdout == "False\n"  # each snippet is a fresh fork: no state carries over
        r = sb.run_python("import os\ntry:\n open('/proc/1/mem', 'rb')\n print('OPENED')\n"
                          "except OSError as e:\n print('denied', e.errno)")
        assert r.stdout.startswith("denied")  # the server is not dumpable
        r = sb.run_python("import os, subprocess\nsubprocess.Popen(['sleep', '1000'], start_new_session=True)\n"
                          "print(os.getpid())")
        assert r.ok
        assert sb.run_python("import os; print(len([p for p in os.listdir('/proc') if p.isdigit()]))"
                             ).stdout == "2\n"  # only the server and this snippet: the orphan died
        sb.write_file("data.txt", "v1")
        s0 = sb.snapshot()
        sb.write_file("data.txt", "v2")
        sb.restore(s0)  # the server held the old mounts; it is restarted
        assert sb.run_python("print(open('data.txt').read())").stdout == "v1\n"
        r = sb.run_python("while True: pass", cpu_time=0.3, timeout=10)
        assert r.status == "cpu_limit"
        assert sb.run_python("print('after')").stdout == "after\n"


def test_unchanged_since_sees_every_write(front):
    with IsolatedSandbox(limits=SMALL) as sb:
        s0 = sb.snapshot()
        sb.exec("true; cat /etc/hostname > /dev/null")
        assert sb.unchanged_since(s0)
        sb.exec("touch /tmp/t")
        assert not sb.unchanged_since(s0)
        sb.restore(s0)
        assert sb.unchanged_since(s0)
        sb.exec("chmod 700 /work")  # metadata only: still a copy-up into the upper layer
        assert not sb.unchanged_since(s0)
        sb.restore(s0)
        sb.run_python("pass")
        assert not sb.unchanged_since(s0)  # a running snippet server forces a real reset


def test_pool_skips_the_reset_only_when_nothing_changed():
    with SandboxPool(backend="isolated", max_total=1, warm=0, timeouts=Timeouts(create_s=20)) as pool:
        sb = pool.acquire(limits=SMALL)
        sb.exec("true")
        pool.release(sb, wait=True)
        sb2 = pool.acquire(limits=SMALL)
        assert sb2 is sb
        sb2.exec("echo dirty > /work/f; echo x > /dev/shm/s")
        pool.release(sb2)  # reset in the background; acquire waits for it, never creates
        sb3 = pool.acquire(limits=SMALL)
        assert sb3 is sb and sb3.exec("ls /work /dev/shm").stdout == "/dev/shm:\n\n/work:\n"
        pool.release(sb3, wait=True)
        assert pool.metrics()["sandbox/created"] == 1


def test_request_encoding_refuses_nul():
    body = native.encode_request(["echo", "a b"], {"K": "v"}, "/work", {"CPU": 3}, False)
    assert body == b"1\0/work\x000\x001\0CPU\x003\x002\0echo\0a b\x001\0K=v\0"
    with pytest.raises(ValueError):
        native.encode_request(["a\0b"], {}, "/work", {}, False)


def test_big_request_is_chunked(front):
    with IsolatedSandbox(limits=SMALL) as sb:
        payload = "x" * 100_000  # > one 60 kB packet, < the 128 KiB argv string limit
        r = sb.exec(["sh", "-c", 'printf %s "$1" | wc -c', "sh", payload])
        assert r.stdout.strip() == "100000"


def test_exec_errors_are_reported(front):
    with IsolatedSandbox(limits=SMALL) as sb:
        r = sb.exec(["sh", "-c", "true", "x" * 200_000])  # one argv string over 128 KiB
        assert r.exit_code in (126, 127) and ("too long" in r.stderr.lower() or "E2BIG" in r.stderr)
        assert sb.exec(["no-such-cmd"]).exit_code == 127
        assert sb.exec("echo fine").stdout == "fine\n"
