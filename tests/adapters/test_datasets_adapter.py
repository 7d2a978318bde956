"""Local datasets (JSONL, Parquet, a save_to_disk folder) registered as domains and checked."""

import json

import pytest

from posttrain.core.errors import ConfigError
from posttrain.domains import DOMAINS, sample_task
from posttrain.rollout.conformance import check_domain
from posttrain.domains.adapters.datasets import bucket_levels, read_rows, register_dataset_domain

CAPITALS = [("France", "Paris"), ("Japan", "Tokyo"), ("Kenya", "Nairobi"), ("Peru", "Lima"),
            ("Canada", "Ottawa"), ("Egypt", "Cairo"), ("Norway", "Oslo"), ("Chile", "Santiago"),
            ("India", "New Delhi"), ("Australia", "Canberra"), ("Vietnam", "Hanoi"),
            ("Portugal", "Lisbon")]


@pytest.fixture
def fresh_ids():
    made = []
    yield made
    for i in made:
        DOMAINS.remove(i)


def _jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_jsonl_domain_conforms_and_scores_strictly(tmp_path, fresh_ids):
    rows = [{"question": f"What is the capital of {c}?" + " Answer in one word." * (i % 3),
             "answer": a} for i, (c, a) in enumerate(CAPITALS)]
    dom = register_dataset_domain(_jsonl(tmp_path / "caps.jsonl", rows),
                                  id="text_data.capitals-v1", family="text_data")
    fresh_ids.append(dom.id)
    assert DOMAINS.get("text_data.capitals") is dom and dom.native is False
    assert dom.difficulties == (1, 2, 3)
    # length buckets: every easy question is at most as long as every hard one
    assert max(len(r.question) for r in dom.rows(1)) <= min(len(r.question) for r in dom.rows(3))
    report = check_domain(dom)
    assert report.ok, report.failures
    task = sample_task(dom, 5, 2)
    assert task.hidden["answer"] not in json.dumps(task.public_view())
    ans = task.hidden["answer"]
    assert dom.score(task, f"<answer>{ans.upper()}</answer>").value == 1.0  # exact is case-insensitive
    assert dom.score(task, f"{ans} Paris Tokyo").value == 0.0
    assert sample_task(dom, 5, 2) == task and dom.rows(2)[0].index >= 0


def test_parquet_numeric_with_difficulty_column(tmp_path, fresh_ids):
    import pyarrow as pa
    import pyarrow.parquet as pq

    q = [f"What is {a} times {b}?" for a in range(2, 8) for b in (3, 11, 123)]
    ans = [a * b for a in range(2, 8) for b in (3, 11, 123)]
    level = [1 + (b > 3) + (b > 11) for a in range(2, 8) for b in (3, 11, 123)]
    pq.write_table(pa.table({"prompt": q, "target": ans, "level": level}), tmp_path / "mul.parquet")
    dom = register_dataset_domain(tmp_path / "mul.parquet", id="math.local_mul-v1", family="math",
                                  question="prompt", answer="target", verifier="numeric",
                                  difficulty_column="level")
    fresh_ids.append(dom.id)
    assert dom.difficulties == (1, 2, 3)
    assert all("123" in r.question for r in dom.rows(3))  # the column's own levels, kept
    assert check_domain(dom).ok
    t = sample_task(dom, 0, 3)
    v = t.hidden["answer"]
    assert dom.score(t, f"{v:,.0f}").value == 1.0            # thousands separators allowed
    assert dom.score(t, f"{v} {v + 1}").value == 0.0


def test_hf_folder_json_verifier(tmp_path, fresh_ids):
    datasets = pytest.importorskip("datasets")
    rows = {"question": [f"Give the list of the first {n} squares as JSON." for n in range(1, 10)],
            "answer": [json.dumps([i * i for i in range(1, n + 1)]) for n in range(1, 10)]}
    datasets.Dataset.from_dict(rows).save_to_disk(str(tmp_path / "squares"))
    dom = register_dataset_domain(tmp_path / "squares", id="algorithms.local_squares-v1",
                                  family="algorithms", verifier="json", difficulty_column=None)
    fresh_ids.append(dom.id)
    t = sample_task(dom, 1, 3)
    assert dom.score(t, json.dumps(t.hidden["answer"])).value == 1.0
    assert dom.score(t, json.dumps(t.hidden["answer"][:-1])).value == 0.0
    assert check_domain(dom).ok


def test_bad_inputs_are_config_errors(tmp_path):
    p = _jsonl(tmp_path / "x.jsonl", [{"q": "a?", "a": "b"}] * 5)
    with pytest.raises(ConfigError, match="question='question'.*columns are"):
        register_dataset_domain(p, id="math.bad-v1", family="math")
    with pytest.raises(ConfigError, match="verifier='fuzzy'"):
        register_dataset_domain(p, id="math.bad-v1", family="math", question="q", answer="a",
                                verifier="fuzzy")
    with pytest.raises(ConfigError, match="difficulty levels"):  # identical rows: one bucket
        register_dataset_domain(p, id="math.bad-v1", family="math", question="q", answer="a")
    with pytest.raises(ConfigError, match="no such file"):
        read_rows(tmp_path / "missing.jsonl")
    assert "math.bad-v1" not in DOMAINS


def test_bucket_levels_is_monotone():
    vals = [5, 1, 9, 3, 7, 2, 8, 4, 6]
    lv = bucket_levels(vals, 3)
    assert sorted(set(lv)) == [1, 2, 3]
    pairs = sorted(zip(vals, lv))
    assert all(a[1] <= b[1] for a, b in zip(pairs, pairs[1:]))
