"""Case metadata is validated when it is built, naming the field."""
import pytest

from harness.case import Affects, Case, CaseError, Source

GOOD = dict(id="a-case", title="A case", kind="silent", affects=">=1.0", devices=("cpu",), sources=(Source("s"),))


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
            Affects(versions=">=0.4,<2.4", form="user-warning"),
        ),
    )
    assert case.rule_for("2.13.0+cpu", "cpu").form == "future-warning"
    assert case.rule_for("2.3.1", "cuda").form == "user-warning"
    assert case.rule_for("0.3.1", "cpu") is None
    assert case.affects_text == ">=2.4 (future-warning); >=0.4,<2.4 (user-warning)"
