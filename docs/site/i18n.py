"""The Chinese edition's catalogues: ``python -m docs.site.i18n update [PREFIX ...]``.

One mechanism, Sphinx's gettext: the English sources that ``docs.site.build`` generates are
read by Sphinx's ``gettext`` builder (one template per page, ``gettext_compact = False``); each
message goes to exactly one catalogue under ``docs/locale/zh_CN/LC_MESSAGES/``:

- ``cases/<topic>/<id>.po``: the case's own prose, the messages of the markdown cells of its
  module (title, symptom, why, the fix, where it comes from), exactly as written;
- everything else is text the generators write, kept as templates: inline code, numbers,
  versions, HTML tags, link targets and file names become ``{0}``, ``{1}`` ... (so a new release
  in the matrix, a new count, leaves them translated; a ``#.`` comment shows one message it
  stands for). A template found on two pages or more (labels, headers, evidence lines) goes to
  ``site.po``; one found on a single page goes to that page's catalogue (``index.po``,
  ``topics/<topic>.po``, ``matrix.po`` ..., and ``cases/<topic>/<id>.po`` for a case's own
  metadata: its sources, its version bounds).

A message already in a case's catalogue (a case title in a topic table) is not repeated on other
pages: the build finds it there. Babel's update keeps every translation; a message whose English
changed is carried over marked fuzzy with the previous English (``#| msgid``), and the build
counts it stale. ``build_catalogues`` compiles the .po files to the .mo files the zh Sphinx build
reads (fuzzy entries left out) and returns what the stale check needs.
"""

from __future__ import annotations

import argparse
import html
import re
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po, write_po

ROOT = Path(__file__).resolve().parents[2]
LOCALE_DIR = ROOT / "docs" / "locale"
LANGUAGE = "zh_CN"
SITE = "site"  # the shared catalogue of generated text
CELL_LINES = 10000  # MyST-NB numbers a notebook's lines cell by cell: line = (cell + 1) * 10000 + line in cell

# What a template replaces by {n}: inline code, HTML tags, a link's target, file names, numbers and
# versions (with a range's dash). Prose words stay, so a translator sees the sentence.
_SLOT = re.compile(
    r"(?P<role>\{[\w:-]+\}`[^`<]*?)(?P<role_target><[^>`]+>)?`"  # {ref}`words <target>`
    r"|(?P<code>(?P<ticks>`+)(?s:.+?)(?<!`)(?P=ticks)(?!`))"  # inline code, ``nested `ticks` too``
    r"|(?P<tag><[^>]+>)"
    r"|(?P<ident>(?<=\[)[\w.]+[-_][\w.-]+(?=\]\())"  # [backward-twice](...): an id as a link's text
    r"|\]\((?P<target>[^)\s]+)\)"
    r"|(?P<file>\b[\w.-]+\.(?:py|ipynb|json|md)\b)"
    r"|(?P<num>(?<![\w.])\d+(?:\.\d+)*(?:\+\w+)?(?![\w]))"
)
_WORD = re.compile(r"[A-Za-z]{2,}")


def messages_dir(locale_dir: Path = LOCALE_DIR) -> Path:
    return Path(locale_dir) / LANGUAGE / "LC_MESSAGES"


def template(msg: str) -> tuple[str, list[str]]:
    """``msg`` with its data replaced by ``{0}``, ``{1}`` ...; and the data, in order."""
    args: list[str] = []

    def slot(m: re.Match) -> str:
        if m.group("role") is not None:  # {ref}`words <target>`: the words are prose, the target is data
            if m.group("role_target") is None:
                return m.group(0)
            args.append(m.group("role_target"))
            return f"{m.group('role')}{{{len(args) - 1}}}`"
        value = m.group("target")
        if value is not None:
            args.append(value)
            return f"]({{{len(args) - 1}}})"
        args.append(m.group(0))
        return f"{{{len(args) - 1}}}"

    return _SLOT.sub(slot, msg), args


def fill(translated: str, args: list[str]) -> str | None:
    """A template's translation with its data put back; None when it names a slot that is not there."""
    try:
        return re.sub(r"\{(\d+)\}", lambda m: args[int(m.group(1))], translated)
    except IndexError:
        return None


def needs_translation(msg: str) -> bool:
    """Whether a message has words to translate once code, tags, link targets and numbers are out
    (an identifier alone, ``retain_graph`` or ``backward-twice``, has none)."""
    text, _ = template(msg)
    text = re.sub(r"\{\d+\}|\b[A-Z]{2,}\d+\b", "", text).strip()  # slots, and codes such as PTF015
    if re.fullmatch(r"[\w.]*[-_][\w.-]*", text):
        return False
    return bool(_WORD.search(text))


_RAW_PART = re.compile(
    r"(<(?:code|pre|script|style|kbd|samp)\b.*?</(?:code|pre|script|style|kbd|samp)>|<[^>]*>)", re.S | re.I
)


# a filter's keys (<option value="amp">amp</option>, data-tags="amp autograd"): a run that is one of them is data
_KEY_ATTR = re.compile(r'\b(?:value|data-[\w-]+)="([^"]*)"')


def raw_messages(markup: str) -> list[tuple[int, int, str]]:
    """The text of raw HTML that a reader reads, outside tags and code: (start, end, message) of
    each run with words, unescaped (a translation is escaped again when it is put back)."""
    keys = {k for value in _KEY_ATTR.findall(markup) for k in html.unescape(value).split()}
    out, at = [], 0
    for part in _RAW_PART.split(markup):
        if part and not part.startswith("<"):
            text = part.strip()
            if text and text not in keys and needs_translation(html.unescape(text)):
                start = at + part.index(text)
                out.append((start, start + len(text), html.unescape(text)))
        at += len(part)
    return out


def translate_raw(markup: str, lookup) -> str:
    """``markup`` with each text run replaced by ``lookup(message)`` (a translation, or None: left as it is)."""
    pieces, at = [], 0
    for start, end, msg in raw_messages(markup):
        found = lookup(msg)
        if found is not None:
            pieces += [markup[at:start], found]
            at = end
    return "".join(pieces) + markup[at:]


def plain(text: str) -> str:
    """A message as a reader sees its words: no backticks, no Markdown escapes (a case title in an
    HTML table is the title of its page without its code marks)."""
    return re.sub(r"\\(.)", r"\1", text.replace("`", ""))


_LINK = re.compile(r"\[(?P<text>[^\]]+)\]\((?P<target>[^)\s]+)\)")


class Reuse:
    """Translations made of messages translated elsewhere (a case's title on a topic page or in the
    home table): the same words, the same words without code marks, or a link whose text is one."""

    def __init__(self, known: dict[str, str]):
        self.known = known
        self.by_plain = {plain(k): plain(v) for k, v in known.items()}

    def find(self, msg: str) -> str | None:
        if msg in self.known:
            return self.known[msg]
        if plain(msg) in self.by_plain:
            return self.by_plain[plain(msg)]
        link = _LINK.fullmatch(msg)
        if link:
            text = self.find(link.group("text"))
            if text is not None:
                return f"[{text}]({link.group('target')})"
        return None


def docname_of(catalogue: str) -> str:
    """The page a catalogue translates: ``cases/autograd/backward-twice`` -> ``cases/backward-twice``."""
    parts = catalogue.split("/")
    return f"cases/{parts[-1]}" if parts[0] == "cases" and len(parts) == 3 else catalogue


# --- extraction ---------------------------------------------------------------------------------
def extract(src: Path, work: Path) -> dict[str, Catalog]:
    """Sphinx's gettext builder over the generated sources: page name -> its template catalogue."""
    from docs.site.sphinx_run import run_sphinx_builder

    pot = work / "pot"
    run_sphinx_builder(
        "gettext",
        src,
        pot,
        work / "doctrees",
        {"gettext_compact": False, "gettext_uuid": False, "gettext_location": True},
    )
    out = {}
    for path in sorted(pot.rglob("*.pot")):
        with path.open("rb") as f:
            out[path.relative_to(pot).with_suffix("").as_posix()] = read_po(f)
    return out


def _cell_of(message) -> set[int]:
    return {line // CELL_LINES - 1 for _, line in message.locations if line and line >= CELL_LINES}


def route(
    pots: dict[str, Catalog], src: Path, topics: dict[str, str], own_cells: dict[str, set[str]]
) -> dict[str, Catalog]:
    """Each message of the extracted pages into the one catalogue that holds it (see the module's doc).

    ``topics``: case id -> topic; ``own_cells``: case id -> the sources of its module's markdown cells."""
    import nbformat

    targets: dict[str, Catalog] = {}

    def target(name: str) -> Catalog:
        if name not in targets:
            targets[name] = Catalog(locale=LANGUAGE, project="torch-pitfalls", fuzzy=False)
        return targets[name]

    case_prose: set[str] = set()
    generated: dict[str, list] = {}  # template -> messages of it
    pages_of: dict[str, set[str]] = {}
    for docname, pot in pots.items():
        case_id = docname.split("/", 1)[1] if docname.startswith("cases/") else None
        cells = None
        if case_id in topics:
            nb = nbformat.read(src / f"{docname}.ipynb", as_version=4)
            own = {s.strip() for s in own_cells.get(case_id, set())}
            cells = {i for i, c in enumerate(nb.cells) if c.cell_type == "markdown" and c.source.strip() in own}
            target(f"cases/{topics[case_id]}/{case_id}")  # every case has its catalogue, even an empty one
        else:
            target(docname)
        for message in pot:
            if not message.id or not needs_translation(message.id):
                continue
            if cells is not None and _cell_of(message) & cells:
                target(f"cases/{topics[case_id]}/{case_id}").add(message.id, locations=message.locations)
                case_prose.add(message.id)
            else:
                generated.setdefault(docname, []).append(message)
                pages_of.setdefault(template(message.id)[0], set()).add(docname)
    prose = Reuse({m: m for m in case_prose})
    for docname, messages in generated.items():
        case_id = docname.split("/", 1)[1] if docname.startswith("cases/") else None
        for message in messages:
            if prose.find(message.id) is not None:
                continue  # a case's title on another page: translated once, in the case's catalogue
            tmpl = template(message.id)[0]
            if len(pages_of[tmpl]) > 1:
                name = SITE
            else:
                name = f"cases/{topics[case_id]}/{case_id}" if case_id in topics else docname
            catalog = target(name)
            if tmpl not in catalog:
                comments = [f"e.g. {message.id}"] if tmpl != message.id else []
                catalog.add(tmpl, locations=message.locations[:1], auto_comments=comments)
    return targets


# --- update and compile -------------------------------------------------------------------------
def update(targets: dict[str, Catalog], locale_dir: Path = LOCALE_DIR, only: list[str] | None = None) -> list[str]:
    """Merge each template into its .po (babel keeps translations, marks changed ones fuzzy);
    the catalogues written, as ``name: +new ~fuzzy -obsolete``."""
    folder = messages_dir(locale_dir)
    report = []
    for name, tmpl in sorted(targets.items()):
        if only and not any(name == p.rstrip("/") or name.startswith(p.rstrip("/") + "/") for p in only):
            continue
        path = folder / f"{name}.po"
        if path.exists():
            catalog = read_catalogue(path)
        else:
            catalog = Catalog(locale=LANGUAGE, project="torch-pitfalls", fuzzy=False)
        before = {m.id for m in catalog if m.id}
        previous = {m.id: m.previous_id for m in catalog if m.id and m.fuzzy and m.previous_id}
        catalog.update(tmpl, update_creation_date=False)
        for m in catalog:  # still fuzzy, same English: babel's merge forgets what it was before
            if m.fuzzy and not m.previous_id and m.id in previous:
                m.previous_id = previous[m.id]
        for key in [k for k, m in catalog.obsolete.items() if not m.string]:
            del catalog.obsolete[key]  # gone from the English and never translated: nothing to keep
        new = sum(1 for m in catalog if m.id and m.id not in before)
        fuzzy = sum(1 for m in catalog if m.id and m.fuzzy and m.string)
        text = _po_text(catalog)
        if not path.exists() or path.read_bytes() != text:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(text)
            report.append(f"{name}: +{new} ~{fuzzy} -{len(catalog.obsolete)}")
    return report


def read_catalogue(path: Path) -> Catalog:
    """A .po file, with the previous English of its fuzzy entries (``#| msgid``), which babel's
    reader drops: an update that ran twice would lose it."""
    from babel.messages.pofile import unescape

    try:
        with Path(path).open("rb") as f:
            catalog = read_po(f, locale=LANGUAGE, abort_invalid=True)
    except Exception as exc:  # babel's errors name no file
        raise I18nError(f"{path}: cannot be read as a gettext catalogue: {exc}") from None
    for message in catalog:
        # babel reads the wrapped tail of a long ``#|`` line as a translator comment ("| msgid ..."),
        # which each update wrote back and the next one read again: drop them (never a translator's)
        message.user_comments = [c for c in message.user_comments if not c.startswith("| ")]
    previous = None
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if line.startswith('#| msgid "'):
            previous = unescape(line[len("#| msgid ") :])
        elif line.startswith('msgid "') and previous is not None:
            message = catalog.get(unescape(line[len("msgid ") :]))
            if message is not None:
                message.previous_id = [previous]
            previous = None
    return catalog


def _po_text(catalog: Catalog) -> bytes:
    import io

    buf = io.BytesIO()
    # no wrapping: one paragraph is one line, so a diff shows which paragraph changed
    write_po(buf, catalog, width=0, include_previous=True, include_lineno=False, sort_output=False)
    # babel wraps the previous English of a fuzzy entry (#| msgid "...) as if it were a comment:
    # put each back on one line, as gettext writes it and as read_catalogue reads it
    return re.sub(
        rb'(\n#\| msgid "[^\n]*?)((?:\n#\| (?!msgid )[^\n]*)+)',
        lambda m: m.group(1) + b" " + b" ".join(line[3:] for line in m.group(2).split(b"\n")[1:]),
        buf.getvalue(),
    )


@dataclass
class Catalogues:
    """What the zh build knows of the translations: per page, and for the shared templates."""

    translated: dict[str, dict[str, str]] = field(default_factory=dict)  # page -> msgid -> msgstr
    fuzzy: dict[str, set[str]] = field(default_factory=dict)  # page -> msgids whose English changed
    empty: dict[str, set[str]] = field(default_factory=dict)  # page -> msgids not translated yet
    pages: set[str] = field(default_factory=set)  # pages that have a catalogue

    def everywhere(self) -> dict[str, str]:
        """Every translated message of every catalogue (a case title on a topic page)."""
        out: dict[str, str] = {}
        for page, strings in self.translated.items():
            if page != SITE:
                out.update(strings)
        return out


def build_catalogues(out: Path, locale_dir: Path = LOCALE_DIR) -> Catalogues:
    """Compile every .po under ``locale_dir`` to ``out/zh_CN/LC_MESSAGES/<page>.mo`` (fuzzy entries left out)."""
    state = Catalogues()
    folder = messages_dir(locale_dir)
    for path in sorted(folder.rglob("*.po")):
        name = path.relative_to(folder).with_suffix("").as_posix()
        page = docname_of(name)
        catalog = read_catalogue(path)
        state.pages.add(page)
        state.translated[page] = {m.id: m.string for m in catalog if m.id and m.string and not m.fuzzy}
        state.fuzzy[page] = {m.id for m in catalog if m.id and m.fuzzy}
        state.empty[page] = {m.id for m in catalog if m.id and not m.string}
        _write_mo(catalog, out, page)
    return state


def _write_mo(catalog: Catalog, out: Path, name: str) -> None:
    """``catalog`` compiled to ``out/zh_CN/LC_MESSAGES/<name>.mo``, fuzzy entries left out."""
    mo = Path(out) / LANGUAGE / "LC_MESSAGES" / f"{name}.mo"
    mo.parent.mkdir(parents=True, exist_ok=True)
    with mo.open("wb") as f:
        write_mo(f, catalog, use_fuzzy=False)


THEME = "sphinx"  # the domain of the theme's words (furo's templates, the footer): sphinx.po


def compile_theme_catalogue(out: Path, locale_dir: Path = LOCALE_DIR) -> None:
    """``sphinx.po`` compiled alone, before Sphinx starts: Sphinx reads the theme's translations
    when it starts, before the ``config-inited`` event at which ``build_catalogues`` runs."""
    po = messages_dir(locale_dir) / f"{THEME}.po"
    if po.is_file():
        _write_mo(read_catalogue(po), out, THEME)


class I18nError(Exception):
    """A catalogue that cannot be used; the message names it."""


# --- the command --------------------------------------------------------------------------------
def regenerate(root: Path = ROOT, locale_dir: Path = LOCALE_DIR, only: list[str] | None = None) -> list[str]:
    """The English sources generated as the build generates them, extracted, routed, merged."""
    import jupytext

    from docs.site.build import CACHE, generate_sources

    with tempfile.TemporaryDirectory(prefix="pitfalls-i18n-") as tmp:
        work = Path(tmp)
        # the case pages `make docs` keeps are the ones it would generate (docs.site.page_cache)
        cases, _ = generate_sources(work / "src", work / "extra", root=root, cache=Path(root) / CACHE)
        topics = {lc.id: lc.topic for lc in cases}
        own = {lc.id: {c.source for c in jupytext.read(lc.path).cells if c.cell_type == "markdown"} for lc in cases}
        targets = route(extract(work / "src", work), work / "src", topics, own)
    return update(targets, locale_dir, only)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m docs.site.i18n", description="Keep the Chinese catalogues in step.")
    sub = p.add_subparsers(dest="command", required=True)
    up = sub.add_parser(
        "update", help="regenerate the templates from the English sources and merge them into the .po files"
    )
    up.add_argument(
        "only",
        nargs="*",
        metavar="PREFIX",
        help="update only these catalogues (paths under LC_MESSAGES without .po, or folders: cases/autograd site)",
    )
    up.add_argument("--root", type=Path, default=ROOT, help="the project whose cases and reports are read")
    up.add_argument("--locale-dir", type=Path, default=LOCALE_DIR, help="default: docs/locale")
    args = p.parse_args(argv)
    from docs.site.sphinx_run import BuildError

    try:
        changed = regenerate(args.root, args.locale_dir, args.only)
    except (I18nError, BuildError) as exc:
        print(f"i18n: error: {exc}", file=sys.stderr)
        return 1
    for line in changed:
        print(line)
    print(f"i18n: {len(changed)} catalogues written under {messages_dir(args.locale_dir)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
