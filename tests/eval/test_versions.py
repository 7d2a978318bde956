"""The version registry: lineage, promotion, rollback, foundation untouched, survives a restart."""

import pytest

from posttrain.core.errors import ConfigError, RegistryError
from posttrain.models.versions import VersionRegistry, weights_hash


def _folder(root, name, payload: bytes):
    d = root / name
    d.mkdir()
    (d / "config.json").write_text('{"model_type": "llama"}')
    (d / "model.safetensors").write_bytes(payload)
    return d


def test_weights_hash_follows_bytes_not_names(tmp_path):
    a = _folder(tmp_path, "a", b"w1")
    b = _folder(tmp_path, "b", b"w1")
    c = _folder(tmp_path, "c", b"w2")
    assert weights_hash(a) == weights_hash(b) != weights_hash(c)
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigError, match="no weight files"):
        weights_hash(tmp_path / "empty")


def test_lineage_promote_rollback_survive_restart(tmp_path):
    db = tmp_path / "v.sqlite"
    base = _folder(tmp_path, "base", b"foundation")
    p1 = _folder(tmp_path, "p1", b"rl-1")
    p2 = _folder(tmp_path, "p2", b"rl-2")
    with VersionRegistry(db) as reg:
        reg.register_foundation("tiny", base)
        v1 = reg.register_posttrain(p1, base_id="tiny", run_id="run-a", config_hash="c0ffee",
                                    domain_versions=["math.add-v1"], data_position={"step": 100})
        assert v1.id == "tiny.pt1"
        reg.promote("tiny.pt1")
        reg.register_posttrain(p2, base_id="tiny", run_id="run-b", config_hash="beef",
                               domain_versions=["math.add-v1", "math.sub-v1"])
        reg.promote("tiny.pt2")
        assert reg.current().id == "tiny.pt2"
        with pytest.raises(RegistryError, match="foundation"):
            reg.promote("tiny")
        with pytest.raises(RegistryError, match="foundation"):
            reg.register_posttrain(p2, base_id="tiny.pt1", run_id="x", config_hash="y",
                                   version_id="bad")
        with pytest.raises(RegistryError, match="already registered"):
            reg.register_foundation("tiny", base)
    foundation_before = VersionRegistry(db).get("tiny")
    with VersionRegistry(db) as reg:  # a restart: everything is still there
        assert [v.id for v in reg.list()] == ["tiny", "tiny.pt1", "tiny.pt2"]
        assert reg.current().id == "tiny.pt2"
        lineage = reg.lineage("tiny.pt2")
        assert [v.id for v in lineage] == ["tiny.pt2", "tiny"]
        assert lineage[0].domain_versions == ("math.add-v1", "math.sub-v1")
        assert reg.get("tiny.pt1").data_position == {"step": 100}
        assert reg.rollback().id == "tiny.pt1"
    with VersionRegistry(db) as reg:
        assert reg.current().id == "tiny.pt1"
        with pytest.raises(RegistryError, match="no earlier"):
            reg.rollback()
        assert reg.get("tiny") == foundation_before  # the foundation row never changes
        assert reg.verify("tiny") and reg.verify("tiny.pt1")
        (p1 / "model.safetensors").write_bytes(b"tampered")
        assert not reg.verify("tiny.pt1")
        assert [v.id for v in reg.list("foundation")] == ["tiny"]
        with pytest.raises(RegistryError, match="unknown version"):
            reg.get("nope")


def test_rollback_to_a_named_version(tmp_path):
    base = _folder(tmp_path, "base", b"f")
    with VersionRegistry(tmp_path / "v.sqlite") as reg:
        reg.register_foundation("f", base)
        for i in range(3):
            reg.register_posttrain(_folder(tmp_path, f"p{i}", bytes([i])), base_id="f",
                                   run_id=f"r{i}", config_hash="h")
            reg.promote(f"f.pt{i + 1}")
        assert reg.rollback(to="f.pt1").id == "f.pt1"
        assert reg.history() == ["f.pt1"]
        with pytest.raises(RegistryError):
            reg.rollback(to="f.pt3")
