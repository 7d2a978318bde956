"""Registry (versions, did-you-mean, entry points) and config validation/overrides."""

import pytest

from posttrain.core import ConfigError, Registry, RegistryError, load_config
from posttrain.core.config import RunConfig, config_hash, parse_override


def test_versioned_resolution_and_did_you_mean():
    reg = Registry("thing")
    reg.add("math.add-v1", 1)
    reg.add("math.add-v2", 2)
    assert reg.get("math.add") == 2
    assert reg.get("math.add-v1") == 1
    with pytest.raises(RegistryError, match="did you mean 'math.add-v1'"):
        reg.get("math.ad-v1")


def test_unversioned_registration_is_refused():
    with pytest.raises(RegistryError, match="not versioned"):
        Registry("thing").add("math.add", 1)


def test_duplicate_registration_is_refused():
    reg = Registry("thing")
    reg.add("a.b-v1", 1)
    with pytest.raises(RegistryError, match="already registered"):
        reg.add("a.b-v1", 2)


def test_entry_point_discovery(monkeypatch):
    from importlib import metadata

    reg = Registry("thing", entry_point_group="posttrain.test_group")

    class EP:
        name = "demo"

        def load(self):
            return lambda: reg.add("demo.x-v1", "plugin")

    class Broken:
        name = "broken"

        def load(self):
            raise ImportError("no such module")

    monkeypatch.setattr(metadata, "entry_points",
                        lambda group: [EP(), Broken()] if group == "posttrain.test_group" else [])
    assert reg.ids() == ["demo.x-v1"]
    assert reg.plugin_ids == {"demo.x-v1"}
    assert "broken" in reg.discovery_errors


def test_defaults_validate():
    cfg = load_config()
    assert isinstance(cfg, RunConfig) and cfg.rl.group_size == 8


def test_overrides_are_typed_and_validated(tmp_path):
    p = tmp_path / "c.yaml"
    p.write_text("rl:\n  steps: 3\n")
    cfg = load_config(p, ["rl.lr=1e-5", "sft.steps=7", "domains=[{id: math.sub-v1}]"])
    assert cfg.rl.lr == 1e-5 and cfg.sft.steps == 7 and cfg.rl.steps == 3
    assert cfg.domains[0].id == "math.sub-v1"
    assert parse_override("a.b=true") == ("a.b", True)


def test_bad_value_names_field_value_and_rule(tmp_path):
    with pytest.raises(ConfigError) as e:
        load_config(None, ["rl.group_size=0"])
    msg = str(e.value)
    assert "rl.group_size" in msg and "0" in msg and "greater than or equal to 1" in msg


def test_unknown_field_suggests_the_right_one():
    with pytest.raises(ConfigError) as e:
        load_config(None, ["rl.learning_rate=0.1"])
    assert "rl.learning_rate" in str(e.value) and "allowed:" in str(e.value)
    with pytest.raises(ConfigError, match="did you mean 'lr'"):
        load_config(None, ["sft.lrr=0.1"])


def test_bad_literal_lists_allowed_values():
    with pytest.raises(ConfigError, match="'drop'"):
        load_config(None, ["async_rl.stale=keep"])


def test_missing_file_and_bad_yaml(tmp_path):
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(tmp_path / "nope.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("rl: [unclosed\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(bad)


def test_config_hash_is_stable_and_sensitive():
    a, b = load_config(), load_config(None, ["rl.lr=0.5"])
    assert config_hash(a) == config_hash(load_config()) != config_hash(b)


def test_aliases_resolve_but_are_not_listed():
    reg = Registry("thing")
    reg.add("math.rg_gcd-v1", "gcd")
    reg.alias("rg.gcd-v1", "math.rg_gcd-v1")
    assert reg.get("rg.gcd-v1") == "gcd" and reg.get("rg.gcd") == "gcd"
    assert reg.ids() == ["math.rg_gcd-v1"]
    with pytest.raises(RegistryError, match="shadow"):
        reg.alias("math.rg_gcd-v1", "x.y-v1")
