"""Version ranges: packaging's PEP 440, with torch's local builds and nightlies handled on purpose."""

import pytest

from torch_pitfalls.versions import parse_range


@pytest.mark.parametrize(
    "spec, version, inside",
    [
        (">=2.0", "2.13.0+cpu", True),  # a local build is its release
        ("<=2.13.0", "2.13.0+cpu", True),  # PEP 440 alone would put 2.13.0+cpu above 2.13.0
        ("==2.13.0", "2.13.0+cu128", True),
        ("<2.13", "2.13.0+cpu", False),
        (">=2.14", "2.14.0.dev20261101+cpu", True),  # a nightly is the release it leads to
        ("<2.14", "2.14.0.dev20261101+cpu", False),  # ... so exactly one of the two ranges holds
        ("<2.14", "2.14.0rc1", False),
        (">=2.13", "2.14.0rc1", True),
        (">=2.6,<2.9", "2.8.0", True),
        (">=2.6,<2.9", "2.9.0", False),
        ("<0.4", "2.13.0", False),  # an open range below every installable torch
        (">=0.3", "1.13.1", True),  # an open range upwards
        ("*", "0.1.12", True),
    ],
)
def test_range_contains(spec, version, inside):
    assert parse_range(spec).contains(version) is inside


@pytest.mark.parametrize("spec", [">=two", "2.0", ">=2.0+cpu", "=>2.0", "~=x"])
def test_a_bad_range_is_refused_with_its_text(spec):
    with pytest.raises(ValueError, match="range"):
        parse_range(spec)


def test_a_bad_version_is_refused():
    with pytest.raises(ValueError, match="not a PEP 440 version"):
        parse_range(">=1.0").contains("not-a-version")


def test_an_empty_range_is_refused_with_the_one_spelling_of_every_release():
    with pytest.raises(ValueError, match="write '\\*' for every release"):
        parse_range("")
