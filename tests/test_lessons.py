"""Every chapter loads, in both languages, and its "try this" does what it says."""

from __future__ import annotations

import pytest

from explorer.lessons import LANGUAGES, check_try, lesson_metric, load_chapters

CHAPTERS = load_chapters()


def test_fifteen_chapters_in_both_languages():
    assert len(CHAPTERS) == 15
    for ch in CHAPTERS:
        for lang in LANGUAGES:
            assert lang in ch.texts, f"{ch.key} lacks {lang}"
            title, body, try_text = ch.texts[lang]
            assert title and len(body) > 100 and try_text


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda c: c.key)
def test_try_this_works_as_described(chapter):
    before, after, holds = check_try(chapter)
    assert holds, f"{chapter.key}: {chapter.expect} but {before} → {after}"


def test_chapter3_unscaled_has_lower_entropy_than_scaled():
    ch = next(c for c in CHAPTERS if c.key.startswith("03"))
    assert lesson_metric(ch.try_config, "mean_entropy") < 0.5 * lesson_metric(ch.config, "mean_entropy")


def test_chinese_text_is_chinese():
    for ch in CHAPTERS:
        title = ch.title("zh")
        assert any("\u4e00" <= c <= "\u9fff" for c in title), title
