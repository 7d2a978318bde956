"""Every registered domain (built-in, other packages' and plugins) passes the conformance check.

Parametrised over the registry at collection time, so each new domain module is covered as
soon as it lands. Two seeds per difficulty keep it fast per domain.
"""

import pytest

from posttrain.domains import DOMAINS, check_domain, load_builtin_domains

load_builtin_domains()


@pytest.mark.parametrize("domain_id", DOMAINS.ids())
def test_domain_conforms(domain_id):
    report = check_domain(DOMAINS.get(domain_id), seeds=(0, 1))
    assert report.ok, f"{domain_id}:\n  " + "\n  ".join(report.failures)
    assert report.id == domain_id
