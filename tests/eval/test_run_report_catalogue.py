"""The run report shows each of the run's domains as the committed catalogue profiles it."""

import json

from posttrain.domains import calibration
from posttrain.eval.run_report import render_run_report


def test_run_report_lists_the_runs_domains_with_their_catalogue_figures(tmp_path):
    (tmp_path / "summary.json").write_text(json.dumps({
        "heldout_before": {"overall": 0.3, "math.add-v1": 0.5},
        "heldout_after": {"overall": 0.4, "math.add-v1": 0.6}}))
    (tmp_path / "metrics.jsonl").write_text(
        json.dumps({"step": 1, "reward/text_data.reverse-v1": 0.2, "reward/mean": 0.2,
                    "reward/math.nope-v9": 0.0}) + "\n")
    html = render_run_report(tmp_path).read_text()
    start = html.index('<section id="catalogue"')
    section = html[start:html.index("</section>", start)]
    entry = calibration.load()["domains"]["text_data.reverse-v1"]
    ref = " / ".join(f"{entry['reference'][d]['pass_rate']:.2f}"
                     for d in sorted(entry["reference"], key=int))
    assert "math.add-v1" in section and "text_data.reverse-v1" in section
    assert entry["record"]["summary"][:30] in section and ref in section
    assert "math.nope-v9" in section and "not in the catalogue" in section
    assert "mean" not in section  # reward/mean is not a domain
