"""Every registered domain (built-in, other packages' and plugins) passes the conformance check.

Parametrised over the registry at collection time, so each new domain module is covered as
soon as it lands. Two seeds per difficulty keep it fast per domain. ``make test`` runs
``posttrain domains check --all`` (the same checker, every domain, two workers) before the
suite, so these per-domain cases are the ``slow`` tier (``make test-slow``) rather than a
second pass over the same ~460 domains; the family minimums are checked here by default.
"""

import pytest

from posttrain.domains import DOMAINS, load_builtin_domains
from posttrain.rollout.conformance import check_domain

load_builtin_domains()


@pytest.mark.slow
@pytest.mark.parametrize("domain_id", DOMAINS.ids())
def test_domain_conforms(domain_id):
    report = check_domain(DOMAINS.get(domain_id), seeds=(0, 1))
    assert report.ok, f"{domain_id}:\n  " + "\n  ".join(report.failures)
    assert report.id == domain_id


def test_library_meets_the_family_minimums():
    """The issue's floor: 300 native domains, with per-family minimums."""
    native = [DOMAINS.get(i) for i in DOMAINS.ids()
              if getattr(DOMAINS.get(i), "native", True) is not False]
    counts: dict[str, int] = {}
    for dom in native:
        counts[dom.family] = counts.get(dom.family, 0) + 1
    minimums = {"code": 40, "terminal": 25, "finance": 25, "geometry3d": 20, "tools": 20,
                "instructions": 25, "long_context": 15, "long_horizon": 10}
    assert len(native) >= 300, len(native)
    assert len(counts) >= 15, counts
    for family, floor in minimums.items():
        assert counts.get(family, 0) >= floor, (family, counts.get(family, 0))
