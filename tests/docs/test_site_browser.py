"""The site as a learner meets it, in the browser, at desktop and phone width, light and dark:
what fits on a phone, what is readable in the dark, what is never shown (colour codes, paths of
the build machine, tofu), the upgrade picker against the CLI, and filters kept in the address.

The 16 views (4 pages x 2 widths x 2 colour schemes: each page loaded once, its width and colour
scheme then changed in place) are each measured by one script and screenshotted (the viewport
only), and the tests read those measurements. With
PITFALLS_SCREENSHOTS=DIR the screenshots are copied there too.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest
from browsing import local_page
from planting import ROOT

pytest.importorskip("sphinx", reason="the docs extra is not installed (pip install -e '.[test,docs]')")

from docs.site.case_links import Repository, case_links  # noqa: E402
from docs.site.start_page import TEN  # noqa: E402
from docs.site.symptom_page import CATEGORIES, SymptomError, load_symptoms  # noqa: E402

CASE = "nan-grad-through-mask"  # a case page whose sources include a Chinese title (S0)
PAGES = {
    "home": "index.html",
    "case": f"cases/{CASE}.html",
    "matrix": "matrix.html",
    "upgrade": "upgrade.html?from=2.3.1&to=2.6.0",
    "performance": "performance.html",
}
PAGES.update({f"zh-{name}": f"zh/{url}" for name, url in list(PAGES.items())})  # the same pages, in Chinese
WIDTHS = {"desktop": 1280, "phone": 400}
SCHEMES = ("light", "dark")

# One script per view: everything the tests below assert, measured in the page as rendered.
MEASURE = r"""({phone, whole}) => {
  const vw = window.innerWidth;
  const scrolls = (el) => ["auto", "scroll"].includes(getComputedStyle(el).overflowX);
  // elements of the page's text reaching past the right edge that no scrolling box of their own
  // (inside the article: furo lets its whole content area scroll sideways on a phone, which is
  // what must not be needed) holds in view
  const article = document.querySelector("article");
  const overflowing = [];
  for (const el of article ? article.querySelectorAll("*") : []) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.right <= vw + 1) continue;
    let box = el.parentElement, held = false;
    while (box && box !== article) {
      if (scrolls(box) && box.getBoundingClientRect().right <= vw + 1) { held = true; break; }
      box = box.parentElement;
    }
    if (!held) overflowing.push(`${el.tagName.toLowerCase()}.${el.className} (${Math.round(r.right)} px)`);
  }
  // Chinese text: every run inside an element marked lang="zh"
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const unmarked = [], marked = [];
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    if (!/[\u4e00-\u9fff]/.test(n.textContent)) continue;
    const host = n.parentElement;
    if (!host.closest("[lang^='zh']")) unmarked.push(n.textContent.trim().slice(0, 40));
    else marked.push(getComputedStyle(host).fontFamily);
  }
  // contrast of the matrix cells' text against the background they are drawn on
  const rgb = (c) => (c.match(/[\d.]+/g) || []).map(Number);
  const background = (el) => {
    for (; el; el = el.parentElement) {
      const c = rgb(getComputedStyle(el).backgroundColor);
      if (c.length === 3 || (c.length === 4 && c[3] > 0)) return c.slice(0, 3);
    }
    return [255, 255, 255];
  };
  const luminance = ([r, g, b]) => {
    const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  };
  const contrasts = [];
  for (const td of Array.from(document.querySelectorAll("table.pitfalls-matrix td")).slice(0, 400)) {
    const a = luminance(rgb(getComputedStyle(td).color).slice(0, 3)), b = luminance(background(td));
    contrasts.push([(Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05), td.className]);
  }
  // on a zh page, runs of text in English only, outside code, outputs and the other edition's link
  function english() {
    if (!document.documentElement.lang.startsWith("zh")) return [];
    // data, not words: code, outputs, the other edition's link, a case's id and tags
    const skip = "code, pre, samp, kbd, script, style, svg, .cell_output, .highlight, [lang='en'], .lang-switch, " +
      ".case-id, .case-tags, #filter-tag";
    const runs = [];
    const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let n = walk.nextNode(); n; n = walk.nextNode()) {
      const t = n.textContent.trim();
      if (!/[A-Za-z]{3,}/.test(t) || /[\u4e00-\u9fff]/.test(t) || n.parentElement.closest(skip)) continue;
      if (n.parentElement.closest("[hidden], .sidebar-drawer .toctree-l3")) continue;
      runs.push(t.replace(/\s+/g, " ").slice(0, 80));
    }
    return runs;
  }
  return {
    width: vw, scrollWidth: document.documentElement.scrollWidth, overflowing: overflowing.slice(0, 5),
    unmarked: unmarked.slice(0, 5), marked: marked.length, markedFont: marked[0] || "",
    cjkFont: document.fonts.check('16px "Noto Sans CJK SC"', "中文"),
    contrasts, text: whole && article ? article.innerText : "", html: whole ? document.documentElement.outerHTML : "",
    copyButtons: document.querySelectorAll("button.copybtn").length,
    // the lesson's first code (the broken code): its top, from the top of the page
    lessonTop: (() => {
      const code = document.querySelector("article .cell:not(.tag_hide-input) .cell_input");
      return code ? code.getBoundingClientRect().top + window.scrollY : null;
    })(),
    english: english(),
    footer: (document.querySelector(".pitfalls-footer") || {}).innerText || "",
    copyright: /Copyright\s*©/.test(document.body.innerText),
  };
}"""


@pytest.fixture(scope="module")
def views(browser, base_url, wait_ms, tmp_path_factory):
    """(page, width, scheme) -> what MEASURE found there; each view screenshotted. Each page is
    loaded once: the width and the colour scheme change in place, as a reader's window would."""
    shots = tmp_path_factory.mktemp("screenshots")
    found = {}
    context, page, outside = local_page(
        browser, base_url, wait_ms, viewport={"width": WIDTHS["desktop"], "height": 900}
    )
    for name, url in PAGES.items():
        page.set_viewport_size({"width": WIDTHS["desktop"], "height": 900})
        page.emulate_media(color_scheme="light")
        page.goto(base_url + url)
        if name.endswith("upgrade"):  # the picker has fetched and drawn its answer
            page.wait_for_selector("#upgrade-result[data-shown='2.3.1_2.6.0']")
        for width_name, scheme in (("desktop", "light"), ("desktop", "dark"), ("phone", "dark"), ("phone", "light")):
            page.set_viewport_size({"width": WIDTHS[width_name], "height": 900})
            page.emulate_media(color_scheme=scheme)
            page.screenshot(path=str(shots / f"{name}-{width_name}-{scheme}.png"))
            whole = width_name == "desktop" and scheme == "light"  # the same HTML in every view: read once
            found[name, width_name, scheme] = page.evaluate(MEASURE, {"phone": width_name == "phone", "whole": whole})
    context.close()
    assert outside == [], f"the site asked for resources outside localhost: {outside}"
    keep = os.environ.get("PITFALLS_SCREENSHOTS")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        for png in shots.glob("*.png"):
            shutil.copy(png, Path(keep) / png.name)
    found["screenshots"] = shots
    return found


def each_view(views):
    return [(key, v) for key, v in views.items() if key != "screenshots"]


def test_every_view_is_screenshotted(views):
    names = sorted(p.name for p in views["screenshots"].glob("*.png"))
    assert names == sorted(f"{p}-{w}-{s}.png" for p in PAGES for w in WIDTHS for s in SCHEMES)


def test_nothing_runs_off_the_screen(views):
    """On a phone and on a desktop, in both editions: no text or table reaches past the right edge
    (a wide table scrolls inside its own box, whose edge is on the screen)."""
    for (name, width, scheme), v in each_view(views):
        assert v["scrollWidth"] <= v["width"], (name, width, scheme, v["scrollWidth"])
        assert v["overflowing"] == [], (name, width, scheme, v["overflowing"])


def test_no_colour_code_and_no_path_of_the_build_machine(views, site_corpus):
    roots = {str(ROOT), str(site_corpus.root)}  # this checkout, and the project the site was built from
    machine = re.compile("|".join([*map(re.escape, sorted(roots)), r"/site-packages", r"/\.venv/", r"/work/"]))
    for (name, width, scheme), v in each_view(views):
        if width == "desktop" and scheme == "light":  # the same HTML in every view
            assert "\x1b" not in v["html"] and not re.search(r"\[[0-9;]*m\b", v["text"]), name
            assert not machine.search(v["html"]), (name, machine.search(v["html"]).group(0))


def test_chinese_text_is_marked_and_has_its_font(views):
    case = views["case", "desktop", "light"]
    assert case["marked"] > 0, "the case page's Chinese source title is not shown"
    assert '"Noto Sans CJK SC"' in case["markedFont"]
    assert case["cjkFont"], "the Noto CJK font is not available: apt-get install fonts-noto-cjk"
    for key, v in each_view(views):
        assert v["unmarked"] == [], (key, v["unmarked"])


def test_matrix_cells_are_readable_in_the_dark_and_in_the_light(views):
    for (name, width, scheme), v in each_view(views):
        if name in ("matrix", "case") and width == "desktop":
            assert v["contrasts"], (name, scheme)
            worst = min(v["contrasts"])
            assert worst[0] >= 4.5, (name, scheme, worst)


def test_code_blocks_have_a_copy_button_and_pages_a_footer(views):
    assert views["case", "desktop", "light"]["copyButtons"] >= 2
    for (name, width, scheme), v in each_view(views):
        words = "torch-pitfalls：PyTorch 常见的坑" if name.startswith("zh-") else "torch-pitfalls: PyTorch pitfalls"
        assert words in v["footer"] and not v["copyright"], (name, width, scheme, v["footer"])


def test_the_broken_code_is_on_a_phones_first_screen(views):
    """The lesson first: on a 400 x 900 screen the broken code starts within the first screen, with
    room to read some of it, in both editions and both colour schemes."""
    for name in ("case", "zh-case"):
        for scheme in SCHEMES:
            top = views[name, "phone", scheme]["lessonTop"]
            assert top is not None and top <= 900 - 150, (name, scheme, top)


# What a zh page may show in English outside code and outputs: names (of the project, of torch's
# APIs, of products, of devices and machines, of releases), case ids and tags, addresses and issue
# references, code written inline in a title, and quoted text: torch's messages and the titles of
# English sources, which TRANSLATING.md keeps in English.
ALLOWED_ENGLISH = [
    re.compile(
        r"^(?:torch-pitfalls|PyTorch|GitHub|Python|Furo|Sphinx|TorchFix|CUDA|CPU|NaN|NumPy|Colab"
        r"|(?:cpu|cuda(?::[\w-]+)?)(?:, (?:cpu|cuda(?::[\w-]+)?))*|（[\w:.-]+）[；。，]?|torch(?: [\d.+\w–-]+)?"
        r"|[a-z0-9]+(?:-[a-z0-9]+)+|[a-z0-9]+(?:_[a-z0-9]+)+"
        r"|https?://\S+|[\w.-]+\.(?:py|ipynb|json)|NumPy [\d.]+|[A-Z][A-Za-z0-9]+(?:\.[A-Za-z0-9_]+)*)$"
    ),
    re.compile(r"[()=\[\]_@#`]|\w\.\w|C\+\+|x86_64"),  # code, an issue reference, a machine
    re.compile(r"^[\"'“‘]|[\"'”’]$"),  # quoted: a message or a source's title
]


# torch's own words inside case titles, which the zh titles keep as torch prints them (the sidebar
# and the home table show a title without its code markup)
TORCH_WORDS = {
    "Jacobian mismatch",
    "-inf",
    "1/den",
    "from torch import Any",
    "can't convert cuda:0",
    "result type Float can't be cast to Long",
    "logits",  # a loss's argument
    "onnxscript",  # a package
}


def is_torch_name(word: str) -> bool:
    """A name of torch's API (torch.softmax, Tensor.backward, Module.forward, torch.float16,
    torch.autograd.gradcheck) or a Python keyword, written without its code markup."""
    import keyword

    import torch

    spaces = (torch, torch.Tensor, torch.nn.Module, torch.nn.functional, torch.autograd)
    return keyword.iskeyword(word) or any(hasattr(space, word) for space in spaces)


def is_allowed_english(run: str) -> bool:
    return run in TORCH_WORDS or is_torch_name(run) or any(p.search(run) for p in ALLOWED_ENGLISH)


def test_a_zh_page_shows_no_english_ui(views):
    for (name, width, scheme), v in each_view(views):
        if name.startswith("zh-") and width == "desktop" and scheme == "light":
            english = [run for run in v["english"] if not is_allowed_english(run)]
            assert english == [], (name, english[:20])


def test_matrix_details_open_on_a_tap(browser, base_url, wait_ms):
    context, page, _ = local_page(browser, base_url, wait_ms, viewport={"width": 400, "height": 900}, has_touch=True)
    page.goto(base_url + "matrix.html")
    cell = page.locator("table.pitfalls-matrix td.changed").first
    cell.tap()
    detail = page.locator(".matrix-detail").first.inner_text()
    assert cell.get_attribute("data-detail") in detail and " → " in detail
    assert (
        page.locator(".matrix-legend").first.bounding_box()["y"]
        < page.locator("table.pitfalls-matrix").first.bounding_box()["y"]
    )
    context.close()


@pytest.fixture(scope="module")
def matrix(site_corpus):
    """The matrix of the corpus the site was built from."""
    return site_corpus.matrix


def cli_upgrade(matrix, start: str, end: str) -> tuple[list[tuple], dict]:
    """What `pitfalls upgrade START END` prints (its two functions, torch_pitfalls.matrix.upgrade's
    upgrade and text, on the matrix of the reports): (case, variant, since, kind) per change line,
    and each case's portable-fix word."""
    from torch_pitfalls.matrix.upgrade import text, upgrade

    changes, fixes, kind = [], {}, None
    for line in text(upgrade(matrix, start, end, "cpu")).splitlines():
        if re.fullmatch(r"[a-z-]+:", line):
            kind = line[:-1]
        elif m := re.match(r"  ([\w-]+) \((\w+), in ([\d.]+)\): ", line):
            changes.append((m[1], m[2], m[3], kind))
        elif m := re.fullmatch(r"  ([\w-]+): (.+)", line):
            fixes[m[1]] = m[2]
    return changes, fixes


def test_the_upgrade_picker_says_what_the_cli_says(page, matrix, site_corpus):
    page.goto(page.base + "upgrade.html")
    page.select_option("#upgrade-from", "2.3.1")
    page.select_option("#upgrade-to", "2.6.0")
    page.wait_for_selector("#upgrade-result[data-shown='2.3.1_2.6.0']")
    lines = page.eval_on_selector_all(
        "#upgrade-result li[data-kind]",
        "items => items.map(i => [i.dataset.case, i.dataset.variant, i.dataset.since, i.dataset.kind])",
    )
    # a line holds the variants that changed alike ("the broken code and the fixed code")
    shown = [(case, variant, since, kind) for case, variants, since, kind in lines for variant in variants.split()]
    fixes = page.eval_on_selector_all(
        "ul.upgrade-fixes li", "items => items.map(i => [i.dataset.case, i.innerText.split(': ').pop()])"
    )
    changes, cli_fixes = cli_upgrade(matrix, "2.3.1", "2.6.0")
    # torch.load's weights_only default flips in 2.6: a change the picker shows (on a sample site too)
    assert "torch-load-weights-only-default" in {case for case, *_ in changes}
    assert sorted(shown) == sorted(changes) and len(lines) <= len(changes)
    assert [tuple(f) for f in fixes] == list(cli_fixes.items())
    # each case under its title, not its id
    titles = {lc.id: lc.case.title for lc in site_corpus.cases}
    links = page.eval_on_selector_all("ul.upgrade-changes li > a", "links => links.map(a => [a.title, a.innerText])")
    assert links and all(text == titles[case] for case, text in links), links[:3]
    assert "from=2.3.1&to=2.6.0" in page.url  # the choice can be linked to
    text = page.inner_text("#upgrade-result")
    assert "\x1b" not in text and '{"type"' not in text


def test_a_late_answer_for_an_earlier_choice_is_not_shown(page):
    """Answers can come back out of order: the page's first one (its default pair) is held back until
    the reader's own choice is shown, then let through; the reader's choice stays on the page."""
    held = []

    def hold_the_first(route):
        if not held:
            held.append(route)
        else:
            route.fallback()  # to the local-only route

    page.route("**/upgrades/**", hold_the_first)
    page.goto(page.base + "upgrade.html")
    page.select_option("#upgrade-from", "2.3.1")
    page.select_option("#upgrade-to", "2.6.0")
    page.wait_for_selector("#upgrade-result[data-shown='2.3.1_2.6.0']")
    assert len(held) == 1 and "2.3.1_2.6.0" not in held[0].request.url
    held[0].fallback()
    page.wait_for_selector("#upgrade-result[data-answered='3']")  # the late answer came back too
    assert page.get_attribute("#upgrade-result", "data-shown") == "2.3.1_2.6.0"
    assert page.inner_text("#upgrade-result .upgrade-head").startswith("torch 2.3.1 → 2.6.0")


def test_a_filter_address_restores_the_filter_and_a_choice_is_written_back(page, site_corpus):
    cases = site_corpus.cases
    page.goto(page.base + "index.html?topic=autograd&kind=silent")
    rows = page.eval_on_selector_all("#cases-table tbody tr:not([hidden])", "rows => rows.map(r => r.dataset.id)")
    assert sorted(rows) == sorted(lc.id for lc in cases if lc.topic == "autograd" and lc.case.kind == "silent")
    assert page.input_value("#filter-topic") == "autograd" and page.input_value("#filter-kind") == "silent"
    page.select_option("#filter-kind", "")
    page.select_option("#filter-symptom", "nan-inf")
    assert "symptom=nan-inf" in page.url and "kind=" not in page.url
    page.goto(page.base + "index.html?symptom=nan-inf")
    rows = page.eval_on_selector_all("#cases-table tbody tr:not([hidden])", "rows => rows.map(r => r.dataset.id)")
    nan = {cid for cid, s in load_symptoms(cases).items() if s.category == "nan-inf"}
    assert set(rows) == nan and nan


# Without a browser: the data behind the pages, and what the build wrote.


def test_every_case_has_one_symptom_line_and_a_gap_is_named(real_cases):
    from dataclasses import replace

    symptoms = load_symptoms(real_cases)
    assert set(symptoms) == {lc.id for lc in real_cases} and {s.category for s in symptoms.values()} <= set(CATEGORIES)
    gap = [
        replace(lc, case=replace(lc.case, symptom_category="", symptom_line=""))
        if lc.id == "nan-grad-through-mask"
        else lc
        for lc in real_cases
    ]
    with pytest.raises(SymptomError, match="no symptom line for case nan-grad-through-mask"):
        load_symptoms(gap)


def test_the_start_page_names_ten_real_cases_and_the_symptom_index_every_case(site, site_corpus, real_cases):
    assert len(TEN) == 10 and set(TEN) <= {lc.id for lc in real_cases} and set(TEN) <= site_corpus.ids
    start = (site / "start.html").read_text(encoding="utf-8")
    assert all(f'href="cases/{cid}.html"' in start for cid in TEN)
    # how to get the tools, with a link to each tool's page
    assert "python -m build --wheel\npip install dist/torch_pitfalls-" in start
    assert all(f'href="{page}.html"' in start for page in ("linters", "watching", "upgrade"))
    index = (site / "symptoms.html").read_text(encoding="utf-8").split('role="main"')[1]
    assert set(re.findall(r'href="cases/([\w-]+)\.html"', index)) == site_corpus.ids


def test_every_page_has_a_description(site, site_corpus):
    pages = [p for p in site.glob("*.html") if p.name not in ("genindex.html", "search.html")]
    pages += list((site / "cases").glob("*.html")) + list((site / "topics").glob("*.html"))
    lacking = [
        str(p.relative_to(site))
        for p in pages
        if '<meta name="description" content="' not in p.read_text(encoding="utf-8")
    ]
    assert lacking == []
    case = (site / "cases" / f"{CASE}.html").read_text(encoding="utf-8")
    assert load_symptoms(site_corpus.cases)[CASE].line.replace("'", "&#x27;") in case


def test_the_upgrade_data_is_the_clis_answer_for_every_pair(site, matrix):
    from torch_pitfalls.matrix.upgrade import upgrade

    m = matrix
    files = sorted((site / "upgrades" / "cpu").glob("*.json"))
    assert len(files) == len(m.versions) * (len(m.versions) - 1) // 2
    shown = json.loads((site / "upgrades" / "cpu" / "2.3.1_2.6.0.json").read_text(encoding="utf-8"))
    for case in shown["cases"]:
        for ch in case["changes"]:
            del ch["shown_before"], ch["shown_after"]
    assert shown == upgrade(m, "2.3.1", "2.6.0", "cpu")


def test_colab_and_source_links_only_where_the_workflow_names_the_repository(site):
    path = ROOT / "cases" / "autograd" / "nan_grad_through_mask.py"
    downloads = ("nan_grad_through_mask.py", "nan_grad_through_mask.ipynb")
    assert (
        Repository.from_env({}) is None
        and Repository.from_env({"PITFALLS_REPO_URL": "https://example.org/a/b"}) is None
    )
    repo = Repository.from_env(
        {
            "PITFALLS_REPO_URL": "https://github.com/someone/torch-pitfalls",
            "PITFALLS_REPO_REF": "0123abc",
            "PITFALLS_NOTEBOOKS_BRANCH": "notebooks",
        }
    )
    html = case_links(path, downloads, repo)
    assert (
        'href="https://colab.research.google.com/github/someone/torch-pitfalls/blob/notebooks/'
        'nan_grad_through_mask.ipynb"'
    ) in html
    assert (
        'href="https://github.com/someone/torch-pitfalls/blob/0123abc/cases/autograd/nan_grad_through_mask.py"' in html
    )
    no_branch = Repository.from_env({"PITFALLS_REPO_URL": "https://github.com/someone/torch-pitfalls"})
    assert "colab" not in case_links(path, downloads, no_branch)
    if not os.environ.get("PITFALLS_REPO_URL"):  # this build named no repository: no guessed link on any page
        page = (site / "cases" / f"{CASE}.html").read_text(encoding="utf-8")
        assert "colab.research.google.com" not in page and 'class="case-button download-ipynb"' in page
