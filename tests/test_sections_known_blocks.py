"""The blocks a mirror's parse remembers for a section body (core/markdown.known_blocks) are the ones a parse of
the body alone gives, so the search index chunks it the same either way."""

import pytest

from dbglog.core import markdown
from dbglog.core.model import Investigation, Section
from dbglog.kb import sections

BODIES = ["```\nunclosed fence", "#foo\n---\nbar", "para\n===", "<!-- open comment", "<div>\nx\n\ny", "- a\n\n  b\n\n",
          "> q\nlazy", "    code\n\n    more", "[ref]: /url\n  'title'", "\tTab\n- x\n\t- y", "text\n- item",
          "---\na: b\n---\nz", "x\n---\n# h1 #\n## h2\n### h3", "<pre>\nx\n</pre>", "~~~\n~~~\n```", "## inner\ntext",
          "    # not heading\n#\tx\n#5 bolt", "- x\n" * 50 + "## later\n" + "y\n" * 50]


@pytest.mark.parametrize("body", BODIES)
def test_known_blocks_are_a_parse_of_the_body_alone(body):
    inv = Investigation(id="20000101-x-0000", title="T", created="2000-01-01T00:00:00Z",
                        updated="2000-01-01T00:00:00Z",
                        sections=[Section("## A", body), Section("## B", "after\n" + body), Section("## C", "end")])
    markdown.parse(markdown.render(inv))
    for s in inv.sections:
        text = s.body.rstrip("\n")
        known = markdown.known_blocks(text)
        if known is None:
            continue
        heads, blocks = sections._blocks(text, text.split("\n"))
        assert [(ln, lv, sections.heading_text(c)) for ln, lv, c in known if lv] == heads
        assert {ln for ln, _lv, _c in known} == blocks
    assert markdown.known_blocks("---\na: b\n---\nz") is None  # front matter opens only a parse of its own


def test_a_verified_section_body_is_not_parsed_again():
    body = "- tried x: still fails\n" * 50 + "### Later\n" + "more\n" * 50
    inv = Investigation(id="20000101-x-0000", title="T", created="2000-01-01T00:00:00Z",
                        updated="2000-01-01T00:00:00Z", sections=[Section("## Notes", body.rstrip("\n"))])
    markdown.parse(markdown.render(inv))
    assert markdown.known_blocks(body.rstrip("\n")) is not None
    assert [(c.heading, c.line) for c in sections.chunk(body.rstrip("\n"), ("Notes",))] == [
        ("Notes", 1), ("Notes > Later", 51)]
