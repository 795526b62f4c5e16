"""Case metadata is validated when it is built, naming the field."""

import pytest

from torch_pitfalls.case import Affects, Case, CaseError, Source

GOOD = dict(id="a-case", title="A case", kind="silent", affects=">=2.0", devices=("cpu",), sources=(Source("s"),))


def make(**overrides):
    return Case(**{**GOOD, **overrides})


@pytest.mark.parametrize(
    "overrides, field",
    [
        (dict(id="Not_Kebab"), "id"),
        (dict(title=" "), "title"),
        (dict(kind="loud"), "kind"),
        (dict(affects="~=nope"), "affects"),
        (dict(affects=()), "affects"),
        (dict(affects=("not an Affects",)), "affects"),
        (dict(devices=()), "devices"),
        (dict(devices=("tpu",)), "devices"),
        (dict(devices="cpu"), "devices"),
        (dict(isolate=("mps",)), "isolate"),
        (dict(sources=()), "sources"),
        (dict(sources=("a title",)), "sources"),
        (dict(tags=("two words",)), "tags"),
        (dict(timeout=0), "timeout"),
    ],
)
def test_malformed_metadata_names_the_field(overrides, field):
    with pytest.raises(CaseError) as info:
        make(**overrides)
    assert info.value.field == field


def test_affects_entries_validate_themselves():
    with pytest.raises(CaseError, match="affects"):
        Affects(versions=">=x")
    with pytest.raises(CaseError, match="unknown device 'tpu'"):
        Affects(device="tpu")


def test_expected_needs_both_the_version_and_the_device():
    case = make(devices=("cuda",), affects=">=2.0")
    assert case.expected("2.13.0", "cuda") and not case.expected("2.13.0", "cpu")
    assert not case.expected("1.13.1", "cuda")


def test_the_first_matching_rule_applies():
    case = make(
        devices=("cpu", "cuda"),
        affects=(
            Affects(versions=">=2.4", form="future-warning", issue="pytorch/pytorch#127689"),
            Affects(versions=">=0.4,<2.4", form="user-warning", since="the 0.4.0 release notes"),
        ),
    )
    assert case.rule_for("2.13.0+cpu", "cpu").form == "future-warning"
    assert case.rule_for("2.3.1", "cuda").form == "user-warning"
    assert case.rule_for("0.3.1", "cpu") is None
    assert case.affects_text == ">=2.4 (future-warning); >=0.4,<2.4 (user-warning)"


@pytest.mark.parametrize("versions", [">=0.4", ">=1.13", ">1.0,<2.4", "==1.2.0", "~=1.5"])
def test_a_lower_bound_before_the_matrix_must_say_where_it_comes_from(versions):
    with pytest.raises(CaseError, match=r"older than the matrix's first release \(1\.13\.1\).*since="):
        Affects(versions=versions)
    assert Affects(versions=versions, since="the 1.3.0 release notes").inferred_bound


@pytest.mark.parametrize("versions", ["*", "<0.4", ">=1.13.1", ">=2.4,<2.6"])
def test_bounds_the_matrix_observes_need_no_source(versions):
    assert not Affects(versions=versions).inferred_bound


def test_no_known_bound_is_written_one_way():
    with pytest.raises(CaseError, match="empty range: write '\\*'"):
        Affects(versions="")
    with pytest.raises(CaseError, match="since= documents a lower bound"):
        Affects(versions="*", since="a source for a bound that is not there")
    with pytest.raises(CaseError, match="since= documents a lower bound"):
        Affects(versions="<0.4", since="a source for a bound that is not there")
