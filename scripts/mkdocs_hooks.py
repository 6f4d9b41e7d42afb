"""MkDocs hooks (``hooks:`` in mkdocs.yml): pages that live outside ``docs/``.

The metric cards stay at ``metrics/<name>/README.md`` and the leaderboard's card at
``space/README.md`` (each is a Hugging Face Space's README), and the changelog at the root. They
are added to the site as ``metrics/<name>.md``, ``space.md`` and ``changelog.md``, and a link to
one of those files from any page (``../metrics/sts/README.md#inputs``, ``../sts/README.md``) is
pointed at its page, so the same Markdown links work on GitHub and in the site. MkDocs reads the
cards' YAML front matter as page metadata, so it is not shown.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

# A Markdown link's target: ](path#anchor "title")
LINK = re.compile(r"\]\((?P<path>[^)\s#]+)(?P<anchor>#[^)\s]*)?(?P<title>\s+\"[^\"]*\")?\)")


def _root(config: MkDocsConfig) -> Path:
    return Path(config.docs_dir).resolve().parent


def outside_pages(root: Path) -> dict[str, str]:
    """Repository path -> the site page it becomes, for the pages kept outside ``docs/``."""
    pages = {
        f"metrics/{card.parent.name}/README.md": f"metrics/{card.parent.name}.md"
        for card in sorted(root.glob("metrics/*/README.md"))
    }
    for path, page in (("space/README.md", "space.md"), ("CHANGELOG.md", "changelog.md")):
        if (root / path).is_file():
            pages[path] = page
    return pages


def on_files(files: Files, config: MkDocsConfig) -> Files:
    root = _root(config)
    for path, page in outside_pages(root).items():
        files.append(File.generated(config, page, abs_src_path=str(root / path)))
    return files


def _repo_path(page: Page, config: MkDocsConfig) -> str:
    """Where the page's Markdown lives in the repository."""
    root = _root(config)
    by_page = {page_uri: path for path, page_uri in outside_pages(root).items()}
    src = page.file.src_uri
    return by_page.get(src, posixpath.join(Path(config.docs_dir).resolve().name, src))


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    pages = outside_pages(_root(config))
    here = posixpath.dirname(_repo_path(page, config))
    site_dir = posixpath.dirname(page.file.src_uri)

    def point(match: re.Match[str]) -> str:
        path = match.group("path")
        if "://" in path or path.startswith(("/", "mailto:")):
            return match.group(0)
        target = pages.get(posixpath.normpath(posixpath.join(here, path)))
        if target is None:
            return match.group(0)
        relative = posixpath.relpath(target, site_dir or ".")
        return f"]({relative}{match.group('anchor') or ''}{match.group('title') or ''})"

    return LINK.sub(point, markdown)
