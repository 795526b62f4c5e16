"""Build the docs site: ``python -m docs.site.build [--out build/site] [--jobs N]``.

Every build starts from nothing: the cases are loaded and their cells executed once, in this
process; the Markdown pages and notebooks are generated into a temp folder beside the output;
Sphinx renders them from scratch (no doctree cache, so an edited case always shows); and only a
whole, warning-free site replaces the old one. Any failure is one line naming what is wrong,
exit status 1, and the previous site left as it was.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import nbformat

import torch_pitfalls
from docs.site.bench_page import BenchError, choose_bench, fix_cost_notes, other_devices, performance_page
from docs.site.case_links import Repository
from docs.site.case_page import page_notebook, write_downloads
from docs.site.execute import CaseRunError, ExecutedCase, execute_each
from docs.site.home_page import home_page, topics_of
from docs.site.learner_pages import CoverageError, SymptomError, coverage_for, symptoms_for, write_learner_pages
from docs.site.lesson import LessonError
from docs.site.linters_page import linters_page, load_bench
from docs.site.matrix_page import matrix_page
from docs.site.outputs_check import problems
from docs.site.page_cache import PageCache, code_and_machine
from docs.site.sphinx_run import BuildError, run_sphinx_builder
from docs.site.topic_page import topic_page
from docs.site.upgrade_page import upgrade_page
from docs.site.watching_page import load_detection, watching_page
from docs.site.zh_build import zh_build
from torch_pitfalls.loader import LoadError, load_cases
from torch_pitfalls.matrix import Matrix, load_matrix
from torch_pitfalls.run.report import ReportError

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "writing-a-case.md"
CODE = [Path(__file__).resolve().parent, Path(torch_pitfalls.__file__).resolve().parent]  # what makes a case page
CACHE = Path("build") / "site-cache"  # under the project built (--root)


@dataclass
class Built:
    out: Path
    cases: int
    topics: int
    seconds: float
    zh: object = None  # docs.site.zh_build.ZhStatus: the Chinese edition's pages and stale translations
    reused: int = 0  # case pages taken from the page cache (docs.site.page_cache), their cases not run


def build_site(
    out: Path,
    root: Path = ROOT,
    cases_dir: Path | None = None,
    reports_dir: Path | None = None,
    bench_json: Path | None = None,
    jobs: int = 1,
    locale_dir: Path | None = None,
    processes: int = 2,
    cache: Path | None = None,
    reuse: bool = True,
) -> Built:
    """``cache``: the folder where each case page is kept for the next build (``docs.site.page_cache``),
    and taken from while unchanged if ``reuse``; None runs every case and keeps nothing."""
    started = time.perf_counter()
    out = Path(out).resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=out.parent))
    try:
        src, extra, html = stage / "src", stage / "extra", stage / "html"
        cases, reused = generate_sources(src, extra, root, cases_dir, reports_dir, bench_json, processes, cache, reuse)
        requires, roots = {lc.id: lc.case.requires for lc in cases}, (str(Path(root).resolve()),)
        with zh_build(src, extra, stage, locale_dir) as zh:  # the Chinese edition, in a second process beside this one
            run_sphinx(src, html, stage / "doctrees", extra, jobs)
            # the English pages read while the Chinese edition is still building
            found = problems(html, sorted((src / "cases").glob("*.ipynb")), requires, roots)
        zh.move_into(html)
        found += [f"zh/{problem}" for problem in problems(html / "zh", (), requires, roots)]
        if found:  # what a reader must never see (docs.site.outputs_check): the first, and how many more
            raise BuildError(found[0] + (f" (and {len(found) - 1} more)" if len(found) > 1 else ""))
        if out.exists():
            out.rename(stage / "old")
        html.rename(out)
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    return Built(out, len(cases), len(topics_of(cases)), time.perf_counter() - started, zh.status, reused)


def generate_sources(
    src: Path,
    extra: Path,
    root: Path = ROOT,
    cases_dir: Path | None = None,
    reports_dir: Path | None = None,
    bench_json: Path | None = None,
    processes: int = 2,
    cache: Path | None = None,
    reuse: bool = True,
) -> tuple[list, int]:
    """Every case loaded and executed, and the site's Markdown and notebooks written into ``src``
    (downloads into ``extra``); the cases, and how many of their pages came from ``cache`` unchanged
    (``docs.site.page_cache``; None: every case runs). ``processes``: 2 shares the cases' execution
    with a forked copy of this process where that is safe (``docs.site.forked``), 1 runs them here."""
    root = Path(root).resolve()
    cases_dir = Path(cases_dir or root / "cases")
    reports_dir = Path(reports_dir or root / "reports")
    bench_json = Path(bench_json or root / "build" / "bench.json")
    try:
        cases = load_cases(cases_dir)
        matrix = load_matrix(reports_dir=reports_dir, cases_dir=cases_dir)
        path, section, notes = choose_bench(bench_json, reports_dir)
        bench = (path, section, notes, other_devices(path, section, reports_dir), fix_cost_notes(root / "benchmarks"))
        symptoms = symptoms_for(root, cases)
        coverage = coverage_for(root, cases)
    except (LoadError, ReportError, BenchError, SymptomError, CoverageError) as exc:
        raise BuildError(str(exc)) from None
    if not cases:
        raise BuildError(f"{cases_dir}: no case modules to build pages from")
    lint_bench = load_bench(reports_dir)
    detection = load_detection(reports_dir, lint_bench, cases_dir, matrix)  # the matrix read once
    kept = None
    if cache is not None:
        facts = repr((sorted(detection.explained), sorted(detection.watch)))
        common = code_and_machine(CODE, reports_dir, cases_dir, {lc.path.resolve() for lc in cases}, facts)
        kept = PageCache(cache, common, root)
    pages = CasePages(src, extra, matrix, lint_bench, detection, kept)
    (src / "cases").mkdir(parents=True)
    to_run = [lc for lc in cases if kept is None or not (reuse and kept.restore(lc, src, extra))]

    def other_pages() -> None:  # they read the loaded cases and the records, not the cases' outputs
        write_sources(src, extra, cases, matrix, bench, lint_bench, cases_dir, symptoms, detection, coverage)

    try:  # shared with a forked copy of this process: each writes the pages of the cases it ran
        execute_each(to_run, root, pages.write, processes=processes, beside=other_pages)
    except (CaseRunError, LessonError) as exc:
        raise BuildError(str(exc)) from None
    return cases, len(cases) - len(to_run)


@dataclass
class CasePages:
    """Where one executed case's page notebook and downloads go, and what they show besides it."""

    src: Path
    extra: Path
    matrix: Matrix
    lint_bench: dict | None
    detection: object
    cache: PageCache | None = None  # where each page is kept for the next build

    def write(self, ex: ExecutedCase) -> None:
        folder = self.extra / "downloads"
        downloads = write_downloads(ex, folder, self.matrix)
        notebook = page_notebook(ex, self.matrix, downloads, self.lint_bench, self.detection)
        page = self.src / "cases" / f"{ex.loaded.id}.ipynb"
        nbformat.write(notebook, page)
        if self.cache is not None:
            self.cache.store(ex.loaded, page, [folder / name for name in downloads])


def write_sources(
    src: Path,
    extra: Path,
    cases: list,
    m: Matrix,
    bench,
    lint_bench: dict | None = None,
    cases_dir: Path = ROOT / "cases",
    symptoms: dict | None = None,
    detection=None,
    coverage=None,
) -> None:
    """The pages beside the case pages: topics, home, ways in, matrix, upgrade, linters, watching,
    performance and the guide."""
    (src / "topics").mkdir(parents=True)
    for topic in topics_of(cases):
        (src / "topics" / f"{topic}.md").write_text(topic_page(topic, cases, m), encoding="utf-8")
    (src / "index.md").write_text(home_page(cases, m, symptoms or {}), encoding="utf-8")
    write_learner_pages(src, extra, cases, m, symptoms or {}, coverage)
    (src / "matrix.md").write_text(matrix_page(m, cases), encoding="utf-8")
    (src / "upgrade.md").write_text(upgrade_page(m, {lc.id: lc.case.title for lc in cases}), encoding="utf-8")
    (src / "linters.md").write_text(linters_page(lint_bench, cases_dir, [lc.id for lc in cases]), encoding="utf-8")
    (src / "watching.md").write_text(watching_page(detection, [lc.id for lc in cases]), encoding="utf-8")
    path, section, notes, others, why = bench
    page, charts = performance_page(path, section, notes, {lc.id for lc in cases}, others, why)
    (src / "performance.md").write_text(page, encoding="utf-8")
    for name, svg in charts.items():
        (src / name).write_bytes(svg)
    shutil.copyfile(GUIDE, src / "writing-a-case.md")


def run_sphinx(src: Path, outdir: Path, doctrees: Path, extra: Path, jobs: int) -> None:
    """The English site: a fresh Sphinx build; any warning fails it (a broken link, a bad cell), with the text."""
    run_sphinx_builder("html", src, outdir, doctrees, site_overrides(extra), jobs)


def site_overrides(extra: Path) -> dict:
    """The build's own settings: the extra files, the torch that printed the outputs, the repository."""
    import torch

    repo = Repository.from_env()
    return {
        "html_extra_path": [str(extra)],
        "pitfalls_torch": str(torch.__version__),
        "pitfalls_repo": f"https://github.com/{repo.slug}" if repo else "",
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m docs.site.build", description="Build the docs site.")
    p.add_argument("--out", type=Path, default=ROOT / "build" / "site", help="output folder (default: build/site)")
    p.add_argument("--jobs", type=int, default=1, help="Sphinx processes reading pages (default: 1)")
    p.add_argument(
        "--case-processes",
        type=int,
        choices=(1, 2),
        default=2,
        help="processes executing the cases: 2 shares them with a forked copy of this process "
        "where fork is safe (Linux, CUDA not initialised), 1 runs them all here (default: 2)",
    )
    p.add_argument(
        "--root",
        type=Path,
        default=ROOT,
        help="project whose cases/, reports/ and build/bench.json are read (default: this one)",
    )
    p.add_argument(
        "--no-cache",
        action="store_true",
        help=f"run every case, ignoring the case pages kept by earlier builds in <root>/{CACHE} "
        "(they are replaced by this build's); by default a page is reused while its case, the code, the records "
        "and the machine are unchanged (docs.site.page_cache)",
    )
    args = p.parse_args(argv)
    if args.jobs < 1:
        p.error(f"--jobs must be at least 1, got {args.jobs}")
    cache = Path(args.root) / CACHE
    try:
        built = build_site(
            args.out,
            root=args.root,
            jobs=args.jobs,
            processes=args.case_processes,
            cache=cache,
            reuse=not args.no_cache,
        )
    except BuildError as exc:
        print(f"docs: error: {exc}", file=sys.stderr)
        return 1
    kept = f", {built.reused} of them kept from earlier builds ({cache})" if built.reused else ""
    print(
        f"docs: {built.cases} case pages{kept}, {built.topics} topic pages, home, matrix and performance "
        f"in {built.out} ({built.seconds:.1f} s)"
    )
    print(built.zh.summary())
    return 0


if __name__ == "__main__":
    code = main()
    # Everything the build makes is written, closed and moved into place (or left as it was) by now;
    # tearing down the interpreter (Sphinx's environment, every doctree, torch) took 2-3 s of a build's
    # wall time for nothing, so the process ends here.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
