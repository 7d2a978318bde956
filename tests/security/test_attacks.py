"""The sandbox attack suite: every case must be contained AND leave the host clean.

Containment is asserted by each case (posttrain.sandbox.attacks); host cleanliness (no
leftover processes, mounts, cgroups or files) by the ``attack_ctx`` fixture after it.
"""

import pytest

from posttrain.sandbox.attacks import ATTACKS

pytestmark = pytest.mark.security


def test_catalogue_has_at_least_twenty_cases():
    assert len(ATTACKS) >= 20
    assert len({name for name, _ in ATTACKS}) == len(ATTACKS)


@pytest.mark.parametrize("name,case", ATTACKS, ids=[n for n, _ in ATTACKS])
def test_attack_is_contained(name, case, attack_ctx):
    contained, detail = case(attack_ctx)
    assert contained, f"{name} was not contained: {detail}"
