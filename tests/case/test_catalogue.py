"""The corpus against its checklist, cases/catalogue.csv (the catalogue's ids, topics, sources)."""
import csv
from pathlib import Path

from torch_pitfalls.loader import load_cases

ROOT = Path(__file__).resolve().parents[2]
CATALOGUE = {row["id"]: row for row in csv.DictReader((ROOT / "cases" / "catalogue.csv").open())}


def test_every_case_is_a_catalogue_row_in_its_topic():
    for lc in load_cases(ROOT / "cases"):
        assert lc.id in CATALOGUE, f"{lc.path}: {lc.id!r} is not in cases/catalogue.csv"
        assert lc.topic == CATALOGUE[lc.id]["topic"], f"{lc.path}: belongs in cases/{CATALOGUE[lc.id]['topic']}/"


def test_every_starred_row_has_a_case():
    have = {lc.id for lc in load_cases(ROOT / "cases")}
    assert {i for i, row in CATALOGUE.items() if row["star"]} <= have


def test_cuda_only_rows_declare_cuda_only():
    for lc in load_cases(ROOT / "cases"):
        if CATALOGUE[lc.id]["devices"] == "CUDA":
            assert lc.case.devices == ("cuda",), lc.id
