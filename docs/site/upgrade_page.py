"""The page "Upgrading torch": a picker of two recorded releases that shows what ``pitfalls
upgrade FROM TO`` says for them, and, below it, every pair of consecutive releases.

The picker's data is the CLI's own answer (``torch_pitfalls.matrix.upgrade.upgrade``) for every pair of
recorded releases and every device, written by the build as one small JSON file per pair
(``upgrades/<device>/<from>_<to>.json``) that static/upgrade-picker.js fetches: no server, and no
second implementation of the comparison. Each change there also carries the texts a page shows
(``shown_before``, ``shown_after``: values printed, colour codes and paths gone).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from docs.site.record_text import change_texts
from docs.site.text import code, esc, raw_html
from torch_pitfalls.matrix import Matrix
from torch_pitfalls.matrix.upgrade import upgrade

ENVIRONMENT_PAGE = Path(__file__).with_name("upgrade_environment.md")
FIX_WORDS = {
    True: "the fix works on both",
    False: "the fix fails on one of them",
    None: "the fix is not observed on both",
}


def device_slug(device: str) -> str:
    return re.sub(r"[^\w.-]", "-", device)


def upgrade_files(m: Matrix) -> dict[str, str]:
    """path under the site -> JSON text: the upgrade from every recorded release to every later one."""
    files = {}
    for device in m.devices:
        for i, start in enumerate(m.versions):
            for end in m.versions[i + 1 :]:
                files[f"upgrades/{device_slug(device)}/{start}_{end}.json"] = json.dumps(
                    shown_upgrade(m, start, end, device), ensure_ascii=False, separators=(",", ":")
                )
    return files


def shown_upgrade(m: Matrix, start: str, end: str, device: str) -> dict:
    """``upgrade()``'s result, each change with the texts a page shows beside the recorded ones."""
    result = upgrade(m, start, end, device)
    for case in result["cases"]:
        found = {(ch.variant, ch.kind, ch.since): ch for ch in m.changes(case["case"], device, start=start, end=end)}
        for ch in case["changes"]:
            ch["shown_before"], ch["shown_after"] = change_texts(m, found[(ch["variant"], ch["kind"], ch["since"])])
    return result


def _titles(m: Matrix, titles: dict[str, str]) -> str:
    """Each case that changes anywhere in the matrix, under its title: the picker shows the title
    (and the zh edition translates this list as it translates every title)."""
    changing = sorted({case for case in titles if any(m.changes(case, d) for d in m.devices)})
    items = "".join(f'<li data-case="{esc(case)}">{esc(titles[case])}</li>' for case in changing)
    return f'<ul id="upgrade-titles" hidden>{items}</ul>'


def _picker(m: Matrix, titles: dict[str, str]) -> str:
    def options(selected: str) -> str:
        return "".join(
            f'<option value="{esc(v)}"{" selected" if v == selected else ""}>{esc(v)}</option>' for v in m.versions
        )

    devices = "".join(f'<option value="{esc(device_slug(d))}">{esc(d)}</option>' for d in m.devices)
    return (
        f'<form class="upgrade-picker" id="upgrade-picker" data-versions="{esc(json.dumps(m.versions))}">'
        f'<label>From torch <select id="upgrade-from">{options(m.versions[-2])}</select></label> '
        f'<label>to torch <select id="upgrade-to">{options(m.versions[-1])}</select></label> '
        f'<label{" hidden" if len(m.devices) < 2 else ""}>on <select id="upgrade-device">{devices}</select></label>'
        '</form><div id="upgrade-result" class="upgrade-result" aria-live="polite">'
        "<p>Choose two releases to see what changes between them. (This needs the page to be served, as "
        "<code>make serve-docs</code> or the published site does; in a terminal, <code>pitfalls upgrade</code> "
        "gives the same answer.)</p></div>" + _titles(m, titles)
    )


def upgrade_page(m: Matrix, titles: dict[str, str]) -> str:
    """The page; ``titles``: case id -> title, for the cases the site has pages for."""
    out = [
        "# Upgrading torch\n",
        "Pick the torch you have and the one you are moving to: the list shows every change in what a case's "
        "broken or fixed code raises, warns or returns between the two, grouped by kind, and whether the case's "
        "fix works on every release in between. It is read from the [version matrix](matrix.md), not from release "
        "notes, and it is what `pitfalls upgrade FROM TO` prints in a terminal (`--json`, `--fail-on KIND` to gate "
        "a CI job).\n",
    ]
    if len(m.versions) >= 2:
        out.append(raw_html(_picker(m, titles)))
    else:
        out.append("Fewer than two releases are recorded, so there is nothing to compare yet.\n")
    out.append("## From one release to the next\n")
    for device in m.devices:
        for a, b in zip(m.versions, m.versions[1:]):
            result = shown_upgrade(m, a, b, device)
            n = sum(result["by_kind"].values())
            out.append(f"### {a} → {b} ({device})\n")
            if not n:
                out.append("No observed change in any case.\n")
                continue
            # one sentence whatever the kinds, then a list item per kind: the zh catalogue holds the
            # sentence once, and an item of a number and a kind has no words to translate. Its own
            # bullet ("*") makes it a list of its own, not the first items of the cases' list below.
            cases = len(result["cases"])
            out.append(
                f"{n} change{'s' if n != 1 else ''} in {cases} case{'s' if cases != 1 else ''}, by kind:\n\n"
                + "\n".join(f"* {k} {code(kind)}" for kind, k in result["by_kind"].items())
                + "\n"
            )
            for case in result["cases"]:
                out.append(f"- [{esc(case['case'])}](cases/{case['case']}.ipynb) ({FIX_WORDS[case['portable_fix']]}):")
                for ch in case["changes"]:
                    out.append(
                        f"  - {ch['variant']}, **{ch['kind'].replace('-', ' ')}**: "
                        f"{code(ch['shown_before'])} → {code(ch['shown_after'])}"
                    )
            out.append("")
    # the breaks of the environment no case can show: prose kept beside this module, in Markdown
    out.append(ENVIRONMENT_PAGE.read_text(encoding="utf-8"))
    return "\n".join(out) + "\n"
