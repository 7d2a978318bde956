"""``check_domains`` in spawned workers: results in order, and a crashing or hanging domain
becomes a failed report while the others are still checked."""

import os
import time

from posttrain.domains import get_domain
from posttrain.rollout.conformance import check_domains


def resolve_or_misbehave(domain_id):
    """Top-level (picklable) resolver: two ids kill or hang the worker that loads them."""
    if domain_id == "crash":
        os._exit(3)
    if domain_id == "hang":
        time.sleep(600)
    return get_domain(domain_id)


def test_parallel_results_in_order_and_faults_isolated():
    ids = ["math.add-v1", "crash", "text_data.reverse-v1", "hang", "nope.missing-v1",
           "algorithms.sort-v1"]
    seen = []
    reports = check_domains(ids, resolve=resolve_or_misbehave, workers=2, timeout_s=4.0,
                            seeds=(0,), on_result=lambda i, r: seen.append(i))
    assert [r.id for r in reports] == ids
    by_id = {r.id: r for r in reports}
    for ok_id in ("math.add-v1", "text_data.reverse-v1", "algorithms.sort-v1"):
        assert by_id[ok_id].ok, by_id[ok_id].failures
    assert "worker process died (exit code 3)" in by_id["crash"].failures[0]
    assert "timed out" in by_id["hang"].failures[0]
    assert "cannot load" in by_id["nope.missing-v1"].failures[0]
    assert sorted(seen) == list(range(len(ids)))


def test_in_process_when_one_worker():
    reports = check_domains(["math.add-v1", "nope.missing-v1"], resolve=get_domain, workers=1,
                            seeds=(0,))
    assert [r.ok for r in reports] == [True, False]
