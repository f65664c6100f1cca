"""docs/configuration-reference.md is the option registry's page, as generated (changeflow/config/reference.py)."""

from __future__ import annotations

import os

from changeflow.config.reference import markdown

PAGE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                    "docs", "configuration-reference.md")


def test_the_checked_in_page_is_the_generated_one():
    with open(PAGE, encoding="utf-8") as f:
        page = f.read()
    assert page == markdown(), ("docs/configuration-reference.md is out of date: regenerate it with "
                                "`python -m changeflow.config.reference > docs/configuration-reference.md`")


def test_every_registered_key_is_on_the_page():
    from changeflow.config.options import registered_options

    page = markdown()
    missing = [o.key for o in registered_options() if f"| `{o.key}`" not in page]
    assert missing == []
