"""The Chinese edition: a second Sphinx build of the same generated sources, in a second process.

``zh_build`` starts ``python -m docs.site.zh_build`` beside the English Sphinx build (the case
cells ran once, in the parent; the sources, their code and outputs are the English build's), and
waits for it when the English build is done. The child renders ``src`` with ``language =
"zh_CN"`` and the catalogues of ``docs/locale`` (``docs.site.zh`` compiles them and marks stale
translations) into ``<stage>/zh``, which is moved to ``<site>/zh``. Its page and stale counts come
back as ``translation-status.json`` in that folder.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from docs.site.i18n import LANGUAGE, LOCALE_DIR, compile_theme_catalogue

ROOT = Path(__file__).resolve().parents[2]
STATUS = "translation-status.json"  # written by docs.site.zh into the zh site
# Sphinx processes of the Chinese build. It does twice the English build's work (each translation parsed,
# jieba's word splitting for search), so with one process it ran ~15 s alone after the English one ended;
# with two it shares that tail (about 5 s less on 2 cores; the pages are the same).
ZH_JOBS = 2


@dataclass
class ZhStatus:
    pages: int = 0
    stale: dict[str, int] = field(
        default_factory=dict
    )  # page -> paragraphs whose English changed after their translation
    untranslated: dict[str, int] = field(default_factory=dict)  # page -> paragraphs not translated yet
    translated: int = 0
    seconds: float = 0.0  # the zh Sphinx build's wall time
    waited: float = 0.0  # how long the English build waited for it, once done itself

    @classmethod
    def read(cls, path: Path) -> "ZhStatus":
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        return cls(data["pages"], data["stale"], data["untranslated"], data["translated"], data.get("seconds", 0.0))

    def summary(self) -> str:
        stale = sum(self.stale.values())
        lines = [
            f"zh: {self.pages} pages, {self.translated} paragraphs translated, "
            f"{sum(self.untranslated.values())} not yet, {stale} stale on {len(self.stale)} pages "
            f"(its Sphinx build {self.seconds:.1f} s, beside the English one; waited for: {self.waited:.1f} s)"
        ]
        lines.extend(f"zh: stale: {page}: {count}" for page, count in sorted(self.stale.items()))
        return "\n".join(lines)


class _Running:
    def __init__(self, out: Path, proc: subprocess.Popen, log: Path):
        self.out, self.proc, self.log = out, proc, log
        self.status: ZhStatus | None = None

    def finish(self) -> None:
        from docs.site.sphinx_run import BuildError

        started = time.perf_counter()
        code = self.proc.wait()
        waited = time.perf_counter() - started
        if code != 0:
            text = self.log.read_text(encoding="utf-8", errors="replace").strip()
            raise BuildError(f"the Chinese edition (exit {code}): {text[-3000:]}")
        self.status = ZhStatus.read(self.out / STATUS)
        self.status.waited = waited

    def move_into(self, html: Path) -> None:
        """The zh site becomes ``html/zh`` (the English build's folder)."""
        self.out.rename(Path(html) / "zh")


@contextlib.contextmanager
def zh_build(src: Path, extra: Path, stage: Path, locale_dir: Path | None = None):
    """Build the zh edition of ``src`` in a second process while the body (the English build) runs."""
    from docs.site.build import site_overrides

    out, log = Path(stage) / "zh", Path(stage) / "zh.log"
    overrides = site_overrides(extra)
    cmd = [
        sys.executable,
        "-m",
        "docs.site.zh_build",
        "--src",
        str(src),
        "--out",
        str(out),
        "--doctrees",
        str(Path(stage) / "zh-doctrees"),
        "--locale-dir",
        str(locale_dir or LOCALE_DIR),
        "--compiled",
        str(Path(stage) / "locale"),
        "--overrides",
        json.dumps(overrides),
    ]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    with log.open("w") as f:
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=f, stderr=subprocess.STDOUT, env=env)
    running = _Running(out, proc, log)
    try:
        yield running
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    running.finish()


def zh_overrides(overrides: dict, compiled: Path, locale_dir: Path) -> dict:
    """The English build's settings, in Chinese: language, catalogues, search."""
    # jieba splits the pages into words for the search index; the glossary's terms are words too
    words = Path(locale_dir) / LANGUAGE / "search-dict.txt"
    return {
        "language": LANGUAGE,
        "locale_dirs": [str(compiled)],
        "gettext_compact": False,
        "gettext_auto_build": False,
        "html_search_language": "zh",
        "html_search_options": {"dict": str(words)} if words.exists() else {},
        "pitfalls_locale_source": str(locale_dir),
        # MyST-NB's fold of a code cell ("Show code cell source"); furo's footer credit without the
        # possessive it hard-codes in English ("@pradyunsg's")
        "nb_code_prompt_show": "显示代码",
        "nb_code_prompt_hide": "隐藏代码",
        "html_show_sphinx": False,
        **overrides,
    }


def main(argv: list[str] | None = None) -> int:
    from docs.site.sphinx_run import BuildError, run_sphinx_builder

    p = argparse.ArgumentParser(
        prog="python -m docs.site.zh_build", description="Build the zh edition of generated sources."
    )
    p.add_argument("--src", type=Path, required=True)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--doctrees", type=Path, required=True)
    p.add_argument("--locale-dir", type=Path, default=LOCALE_DIR)
    p.add_argument("--compiled", type=Path, required=True, help="where the .mo files are written")
    p.add_argument(
        "--overrides", default="{}", help="Sphinx settings as JSON: the English build's, and any of the zh ones"
    )
    args = p.parse_args(argv)
    try:
        overrides = zh_overrides(json.loads(args.overrides), args.compiled, args.locale_dir)
        started = time.perf_counter()
        compile_theme_catalogue(args.compiled, args.locale_dir)
        run_sphinx_builder("html", args.src, args.out, args.doctrees, overrides, ZH_JOBS)
        status = json.loads((args.out / STATUS).read_text(encoding="utf-8"))
        status["seconds"] = round(time.perf_counter() - started, 2)
        (args.out / STATUS).write_text(json.dumps(status, ensure_ascii=False, indent=1), encoding="utf-8")
    except BuildError as exc:
        print(f"docs: error: {exc}", file=sys.stderr)
        return 1
    shutil.rmtree(args.doctrees, ignore_errors=True)
    return 0


if __name__ == "__main__":
    code = main()
    # as docs.site.build's own process: the edition is written and its status saved, and the English
    # build waits for this process, so the interpreter's teardown is skipped
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
