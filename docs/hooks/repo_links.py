"""mkdocs hook: links from docs/ to files elsewhere in the repository.

The pages link repository files relatively (`../contracts/conformance/pass-v1.json`,
`../bench/README.md`), so the links work where the Markdown is read: a checkout, a forge. mkdocs
sees docs/ only, so this hook copies every file so linked into the site under `repo/` (a linked
Markdown file, such as bench/README.md, becomes a page whose own links are followed the same way),
points the links at those copies, and fails the build on a link to a file that does not exist.
Links between pages of docs/ are mkdocs' own to check (`strict`, `validation` in mkdocs.yml).
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

LINK = re.compile(r"(\]\()([^)\s#]+)")  # an inline link's target, up to its anchor
PREFIX = "repo"


def _is_url(target: str) -> bool:
    """A URL, or a path absolute on the site: no file of the repository."""
    return bool(re.match(r"^[a-z][a-z0-9+.-]*:", target)) or target.startswith("/")


def _outside(source: Path, target: str, docs: Path) -> Path | None:
    """The file a relative link of `source` names when it lies outside docs/, else None."""
    if _is_url(target):
        return None
    resolved = (source.parent / target).resolve()
    return None if resolved.is_relative_to(docs) else resolved


def _scan(source: Path, docs: Path, root: Path) -> tuple[list[Path], list[str]]:
    """The repository files `source` links outside docs/, and its broken such links."""
    found: list[Path] = []
    broken: list[str] = []
    for match in LINK.finditer(source.read_text(encoding="utf-8")):
        target = _outside(source, match.group(2), docs)
        if target is None:
            continue
        if not target.is_relative_to(root) or not target.is_file():
            broken.append(f"{source.relative_to(root)}: {match.group(2)} is not a file of the repository")
        else:
            found.append(target)
    return found, broken


def on_files(files: Files, config: MkDocsConfig) -> Files:
    docs = Path(config.docs_dir).resolve()
    root = docs.parent
    queue = [Path(page.abs_src_path) for page in files.documentation_pages() if page.abs_src_path]
    broken: list[str] = []
    seen: set[Path] = set()
    while queue:
        found, bad = _scan(queue.pop(), docs, root)
        broken += bad
        for target in found:
            if target in seen:
                continue
            seen.add(target)
            src_uri = f"{PREFIX}/{target.relative_to(root).as_posix()}"
            files.append(File.generated(config, src_uri, abs_src_path=str(target)))
            if target.suffix == ".md":
                queue.append(target)
    if broken:
        raise PluginError("broken links to repository files:\n  " + "\n  ".join(sorted(set(broken))))
    return files


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    docs = Path(config.docs_dir).resolve()
    root = docs.parent
    source = Path(page.file.abs_src_path or "")
    here = posixpath.dirname(page.file.src_uri) or "."

    def in_site(match: re.Match[str]) -> str:
        """The link made relative to the page's place in the site (a copied file's, for one outside)."""
        target = match.group(2)
        if _is_url(target):
            return match.group(0)
        resolved = (source.parent / target).resolve()
        if resolved.is_relative_to(docs):
            if source.is_relative_to(docs):
                return match.group(0)  # docs/ to docs/: mkdocs' own
            site = resolved.relative_to(docs).as_posix()
        else:
            site = f"{PREFIX}/{resolved.relative_to(root).as_posix()}"
        return match.group(1) + posixpath.relpath(site, here)

    return LINK.sub(in_site, markdown)
