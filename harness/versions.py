"""Torch version ranges (PEP 440, through ``packaging``).

Two explicit choices about torch's version strings:

* Local labels are builds of the same release: ``2.13.0+cpu`` and ``2.13.0+cu128`` are 2.13.0.
  PEP 440 would order ``2.13.0+cpu`` above ``2.13.0`` (so ``<=2.13.0`` would exclude it), so a
  range is always tested against the public version.
* Pre-releases (nightlies such as ``2.14.0.dev20261101``, candidates such as ``2.14.0rc1``) are
  matched as the release they lead to: a change lands in the nightlies before its release, and
  PEP 440 alone would leave them in neither ``<2.14`` (which excludes 2.14 pre-releases) nor
  ``>=2.14`` (which sorts them below 2.14.0).
"""

from __future__ import annotations

import functools

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

# The oldest release the version matrix runs (PyPI has no cp311 wheels before 1.13): a bound at
# or after it is checked by the matrix; a bound before it can only be read somewhere.
MATRIX_FIRST = "1.13.1"


class VersionRange:
    """A PEP 440 range of torch versions; ``"*"`` means every version."""

    def __init__(self, text: str):
        self.text = text
        if not text.strip():
            raise ValueError("an empty range: write '*' for every release")
        spec = "" if text.strip() == "*" else text
        try:
            self._spec = SpecifierSet(spec, prereleases=True)
        except InvalidSpecifier:
            raise ValueError(f"{text!r} is not a PEP 440 version range (e.g. '>=1.13,<2.5')") from None
        for s in self._spec:
            if "+" in s.version:
                raise ValueError(f"{text!r}: a range names releases, not local builds ({s.version!r})")

    def contains(self, version: str | Version) -> bool:
        return self._spec.contains(release_of(version), prereleases=True)

    @property
    def lower_bound(self) -> Version | None:
        """The oldest release the range admits by a bound (``>=``, ``>``, ``==``, ``~=``), or None."""
        bounds = [Version(s.version) for s in self._spec if s.operator in (">=", ">", "==", "~=")]
        return max(bounds) if bounds else None

    @property
    def upper_bound(self) -> Version | None:
        """The release from which the range stops (``<``, ``<=`` taken as the next one), or None."""
        bounds = [Version(s.version) for s in self._spec if s.operator in ("<", "<=")]
        return min(bounds) if bounds else None

    def __repr__(self) -> str:
        return f"VersionRange({self.text!r})"


@functools.lru_cache(maxsize=None)
def parse_range(text: str) -> VersionRange:
    if not isinstance(text, str):
        raise ValueError(f"a version range must be a string, got {type(text).__name__}")
    return VersionRange(text)


def parse_version(text: str) -> Version:
    try:
        return Version(text)
    except InvalidVersion:
        raise ValueError(f"{text!r} is not a PEP 440 version") from None


def release_of(version: str | Version) -> Version:
    """The release a torch version string belongs to: ``2.13.0+cpu`` and ``2.14.0.dev20261101``
    are 2.13.0 and 2.14.0 (see the module's docstring)."""
    v = version if isinstance(version, Version) else parse_version(version)
    return Version(v.base_version)


def affected(ranges: tuple[str, ...], torch_version: str | None) -> bool:
    """Whether any of a case's ranges admits the version (every one does when no version is given)."""
    if torch_version is None:
        return True
    return any(r == "*" or parse_range(r).contains(torch_version) for r in ranges)
