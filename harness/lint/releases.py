"""A set of torch releases the linted code runs on: every release, one release (``--torch``, the
installed one), or those a package declares (``torch>=2.6``); and whether a case's range meets it.

Two PEP 440 ranges meet when some release lies in both. Ranges are written with release bounds
(``>=2.4,<2.6``), so they are compared on a grid of releases: every minor from 0.1 to 2.40 and the
majors after (what torch may yet publish), each as X.Y.0 and as a late patch, plus every version
either range names and the patch after it (``!=2.4.0``, ``<2.4.1`` stay exact). ``packaging`` has
no intersection of specifier sets; the grid is that intersection's test, for ranges of this shape.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from torch_pitfalls.versions import parse_range, release_of

_GRID = tuple(
    Version(f"{major}.{minor}.{patch}")
    for major, minors in ((0, 5), (1, 14), (2, 41), (3, 10), (4, 10), (5, 1))
    for minor in range(minors)
    for patch in (0, 9)
) + (Version("99.0"),)


@dataclass(frozen=True)
class Releases:
    specs: tuple[SpecifierSet, ...] | None = None  # any of these (None: every release)
    version: Version | None = None  # exactly this one

    @classmethod
    def every(cls) -> "Releases":
        return cls()

    @classmethod
    def one(cls, version: str | Version) -> "Releases":
        return cls(version=release_of(version))

    @classmethod
    def of_specifiers(cls, specs) -> "Releases":
        return cls(specs=tuple(SpecifierSet(str(s), prereleases=True) for s in specs))

    @property
    def is_every(self) -> bool:
        return self.specs is None and self.version is None

    @property
    def is_empty(self) -> bool:
        return self.specs is not None and not any(_admitted(self.specs, v) for v in _grid(self.specs))

    def meets(self, ranges: tuple[str, ...]) -> bool:
        """Whether some release of this set lies in one of the case's ranges (``"*"``: every one)."""
        if self.is_every or "*" in ranges:
            return True
        if self.version is not None:
            return any(parse_range(r).contains(self.version) for r in ranges)
        return any(_meet(self.specs, r) for r in ranges)

    def __str__(self) -> str:
        if self.version is not None:
            return str(self.version)
        return "every release" if self.specs is None else " or ".join(f"torch{s}" for s in self.specs)


def _admitted(specs, version: Version) -> bool:
    return any(s.contains(version, prereleases=True) for s in specs)


def _grid(specs) -> tuple[Version, ...]:
    named = {Version(s.version.replace("*", "0")) for spec in specs for s in spec}
    bumped = {Version(f"{v.major}.{v.minor}.{v.micro + 1}") for v in named}
    return (*_GRID, *named, *bumped)


@functools.lru_cache(maxsize=None)
def _meet(specs: tuple[SpecifierSet, ...], case_range: str) -> bool:
    case = parse_range(case_range)
    grid = _grid((*specs, SpecifierSet("" if case_range.strip() == "*" else case_range, prereleases=True)))
    return any(_admitted(specs, v) and case.contains(v) for v in grid)
