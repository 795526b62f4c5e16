"""The search index's stemming, once per word and build instead of once per word and page.

Sphinx's search index stems every word of every page with a Snowball stemmer (English, and the
Latin words of the Chinese edition); it remembers stems only within one page, so the site's
~110,000 words cost a tenth of an edition's build. A stem depends on the word alone, so
``install`` makes each stemmer Sphinx asks for remember its answers for as long as it lives (one
build): the same index, sooner (tests/docs/test_sidebar.py checks the stems are the stemmer's).
"""

from __future__ import annotations

import functools

import snowballstemmer


class _Remembering:
    """A Snowball stemmer whose ``stemWord`` remembers each word's stem."""

    def __init__(self, stemmer):
        self._stemmer = stemmer
        self.stemWord = functools.lru_cache(maxsize=None)(stemmer.stemWord)

    def __getattr__(self, name):
        return getattr(self._stemmer, name)


def install() -> None:
    """``snowballstemmer.stemmer`` (which Sphinx's search languages call) returns remembering stemmers."""
    if getattr(snowballstemmer.stemmer, "_pitfalls_remembering", False):
        return
    make = snowballstemmer.stemmer

    def stemmer(language: str):
        return _Remembering(make(language))

    stemmer._pitfalls_remembering = True
    stemmer.__wrapped__ = make
    snowballstemmer.stemmer = stemmer
