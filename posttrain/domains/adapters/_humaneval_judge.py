"""The HumanEval judge: runs INSIDE the sandbox (stdlib only; shipped there as a file).

Two processes, so the code under test never shares memory with the code that judges it:

- this judge (trusted) makes itself non-dumpable (other processes of the same user cannot
  read its memory or reopen its stdin/stdout through ``/proc``) and forks the candidate
  process BEFORE it reads the nonce (stdin) or the test (``problem.json``, deleted once read);
  it sends the candidate only the prompt and the completion, builds prompt and test in its
  own namespace and calls ``check(proxy)``; ``proxy`` forwards each call to the candidate;
- the candidate process runs prompt + completion and answers calls. Values
  cross the pipe as tagged JSON of plain types only (None, bool, int, float, complex, str,
  list, tuple, dict, set, frozenset): an object with a forged ``__eq__`` cannot reach the
  judge, and patching builtins or modules in the candidate cannot change the judge's asserts.

The judge prints ``PASS <nonce>`` only when ``check`` returned; anything else is a failure.
The completion's own prints go to /dev/null and cannot reach the judge's stdout.
"""

import json
import math
import os
import sys


def encode(v, depth=0):
    if depth > 50:
        raise TypeError("value nested too deeply")
    t = type(v)
    if v is None or t is bool or t is int or t is str:
        return [t.__name__ if v is not None else "none", v]
    if t is float:
        return ["float", repr(v) if not math.isfinite(v) else v]
    if t is complex:
        return ["complex", [encode(v.real), encode(v.imag)]]
    if t in (list, tuple, set, frozenset):
        return [t.__name__, [encode(x, depth + 1) for x in v]]
    if t is dict:
        return ["dict", [[encode(k, depth + 1), encode(x, depth + 1)] for k, x in v.items()]]
    raise TypeError(f"unsupported return type {t.__name__}")


def decode(e):
    tag, v = e
    if tag == "none":
        return None
    if tag in ("bool", "int", "str"):
        return {"bool": bool, "int": int, "str": str}[tag](v)
    if tag == "float":
        return float(v)
    if tag == "complex":
        return complex(decode(v[0]), decode(v[1]))
    if tag in ("list", "tuple", "set", "frozenset"):
        return {"list": list, "tuple": tuple, "set": set, "frozenset": frozenset}[tag](
            decode(x) for x in v)
    if tag == "dict":
        return {decode(k): decode(x) for k, x in v}
    raise ValueError(f"bad tag {tag!r}")


def candidate_main(req_fd, rep_fd):
    """The forked candidate: load prompt + completion, then answer calls until EOF."""
    reqs, proto = os.fdopen(req_fd, "r"), os.fdopen(rep_fd, "w")
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)  # the completion's prints and reads go nowhere
    sys.stdout = sys.stderr = open(os.devnull, "w")
    problem = json.loads(reqs.readline() or "{}")
    ns = {"__name__": "solution"}
    try:
        exec(compile(problem["prompt"] + problem["completion"], "solution.py", "exec"), ns)
        fn = ns[problem["entry_point"]]
        proto.write(json.dumps(["ready"]) + "\n")
    except BaseException as exc:  # noqa: BLE001 - reported to the judge as a failure
        proto.write(json.dumps(["error", type(exc).__name__]) + "\n")
        proto.flush()
        return
    proto.flush()
    for line in reqs:
        try:
            args = decode(json.loads(line))
            out = ["ok", encode(fn(*args))]
        except BaseException as exc:  # noqa: BLE001
            out = ["raise", type(exc).__name__]
        proto.write(json.dumps(out) + "\n")
        proto.flush()


def _nondumpable():
    try:
        import ctypes

        ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE = 4
    except Exception:  # noqa: BLE001 - the nonce still guards the verdict
        pass


class CandidateRaised(Exception):
    pass


def judge_main(here):
    _nondumpable()  # before anything secret exists; inherited by the fork below
    req_r, req_w = os.pipe()
    rep_r, rep_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the candidate: forked before the nonce or the test are read
        os.close(req_w)
        os.close(rep_r)
        try:
            candidate_main(req_r, rep_w)
        finally:
            os._exit(0)
    os.close(req_r)
    os.close(rep_w)
    to_child, from_child = os.fdopen(req_w, "w"), os.fdopen(rep_r, "r")
    try:
        verdict = _judge(here, to_child, from_child)
    except BaseException as exc:  # noqa: BLE001 - any failure of the check is a failed test
        verdict = f"FAIL {type(exc).__name__}"
    finally:
        try:
            os.kill(pid, 9)
        except OSError:
            pass
    print(verdict)


def _judge(here, to_child, from_child):
    nonce = sys.stdin.readline().strip()
    path = os.path.join(os.path.dirname(here), "problem.json")
    with open(path) as fh:
        problem = json.load(fh)
    os.unlink(path)  # gone before the candidate's code runs
    to_child.write(json.dumps({k: problem[k] for k in ("prompt", "completion", "entry_point")})
                   + "\n")
    to_child.flush()
    if json.loads(from_child.readline() or "null") != ["ready"]:
        return "FAIL candidate does not load"

    def proxy(*args):
        to_child.write(json.dumps(encode(list(args))) + "\n")
        to_child.flush()
        reply = json.loads(from_child.readline() or '["raise", "candidate died"]')
        if reply[0] != "ok":
            raise CandidateRaised(reply[1])
        return decode(reply[1])

    ns = {"__name__": "judge"}
    exec(compile(problem["prompt"], "prompt.py", "exec"), ns)
    ns[problem["entry_point"]] = proxy  # tests may call the function by its own name
    exec(compile(problem["test"], "test.py", "exec"), ns)
    ns["check"](proxy)
    return f"PASS {nonce}"


if __name__ == "__main__":
    judge_main(os.path.abspath(__file__))
