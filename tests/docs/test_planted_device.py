"""Every page that speaks of devices says what the reports hold, whatever a contributed column is
called: the reports are planted with the H200 run renamed to a device no page could know
(``cuda:acme-z9``), and each generator is asked again (issue 39, item 3)."""

from __future__ import annotations

import shutil

import pytest
from planting import ROOT

pytest.importorskip("sphinx", reason="the docs extra is not installed (pip install -e '.[test,docs]')")

from docs.site.home_page import about_page, home_page  # noqa: E402
from docs.site.matrix_page import case_matrix_section, matrix_page, newest_symptom  # noqa: E402
from docs.site.upgrade_page import upgrade_page  # noqa: E402
from torch_pitfalls.loader import load_cases  # noqa: E402
from torch_pitfalls.matrix import load_matrix  # noqa: E402
from torch_pitfalls.matrix.claims import all_claims  # noqa: E402

PLANTED = "acme-z9"
CASE = "nan-grad-through-mask"  # a case the H200 run reproduced


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    reports = tmp_path_factory.mktemp("reports")
    for path in (ROOT / "reports").glob("*.json"):
        shutil.copy(path, reports / path.name.replace("nvidia-h200", PLANTED))
    cases = load_cases(ROOT / "cases")
    return cases, load_matrix(reports, ROOT / "cases")


def test_the_planted_column_is_a_device_of_the_matrix(planted):
    _, m = planted
    assert f"cuda:{PLANTED}" in m.devices and not any("h200" in d for d in m.devices), m.devices


def test_every_page_that_speaks_of_devices_names_the_planted_one(planted):
    cases, m = planted
    case = next(lc for lc in cases if lc.id == CASE)
    pages = {
        "about": about_page(cases, m),
        "home": home_page(cases, m),
        "matrix": matrix_page(m, cases),
        "upgrade": upgrade_page(m, {lc.id: lc.case.title for lc in cases}),
        "case matrix section": case_matrix_section(m, CASE),
        "case claims": "\n".join(all_claims(case.case, m)),
    }
    for name, text in pages.items():
        assert "nvidia-h200" not in text, name
        assert "no CUDA report" not in text, name
    for name in ("about", "matrix", "case matrix section", "case claims"):
        assert f"cuda:{PLANTED}" in pages[name], name
    assert f"CUDA is observed on cuda:{PLANTED}" in pages["about"]


def test_what_you_will_see_on_a_device_shows_the_values_it_recorded(planted):
    """On a device whose record kept the values (this project's cpu runs; a CUDA run of a harness
    that copies them back), the NaN the lesson is about is in "what you will see"."""
    _, m = planted
    section = case_matrix_section(m, CASE)
    seen = section.split("### What you will see on your torch", 1)[1]
    assert "tensor([nan, 1.])" in seen
    assert newest_symptom(m, CASE).startswith("seen on")
