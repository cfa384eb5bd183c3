"""locale/: every message translated, and the committed .mo files match their .po files.

The .mo files are committed because a fresh machine may have no gettext to compile them.
"""

from __future__ import annotations

import ast
import gettext
import re
from pathlib import Path

import pytest
from django.conf import settings
from django.utils import translation

from accounts.views import lockout_message
from games.engines import KINDS, engine_for

LOCALE = Path(settings.BASE_DIR) / "locale"
LANGUAGES = ["ja", "ru"]


def _po_entries(path: Path) -> list[dict]:
    """A small .po reader: enough for the files makemessages writes."""
    entries = []
    for block in path.read_text(encoding="utf-8").split("\n\n"):
        fields: dict[str, list[str]] = {}
        flags = ""
        current = None
        for line in block.splitlines():
            if line.startswith("#,"):
                flags += line
            match = re.match(r"^(msgid_plural|msgid|msgstr\[\d+\]|msgstr) (\".*\")$", line)
            if match:
                current = match.group(1)
                fields[current] = [match.group(2)]
            elif line.startswith('"') and current:
                fields[current].append(line)
        if "msgid" in fields:
            entry = {
                key: "".join(ast.literal_eval(part) for part in parts)
                for key, parts in fields.items()
            }
            entry["fuzzy"] = "fuzzy" in flags
            entries.append(entry)
    return entries


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_message_is_translated_and_none_is_fuzzy(language):
    po_file = LOCALE / language / "LC_MESSAGES" / "django.po"
    entries = [e for e in _po_entries(po_file) if e["msgid"]]
    assert len(entries) > 50
    untranslated = [
        e["msgid"] for e in entries if not all(v for k, v in e.items() if k.startswith("msgstr"))
    ]
    assert untranslated == []
    assert [e["msgid"] for e in entries if e["fuzzy"]] == []


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_compiled_catalog_matches_the_po_file(language):
    folder = LOCALE / language / "LC_MESSAGES"
    with (folder / "django.mo").open("rb") as mo:
        catalog = gettext.GNUTranslations(mo)
    for entry in _po_entries(folder / "django.po"):
        if not entry["msgid"]:
            continue
        if "msgid_plural" in entry:
            assert catalog.ngettext(entry["msgid"], entry["msgid_plural"], 1) == entry["msgstr[0]"]
        else:
            assert catalog.gettext(entry["msgid"]) == entry["msgstr"], entry["msgid"]


@pytest.mark.parametrize(
    ("language", "expected"),
    [
        ("ja", "有効なトークンがすでに 5 個あります。"),
        ("ru", "У вас уже 5 действующих токенов."),  # noqa: RUF001 (Cyrillic on purpose)
    ],
)
def test_python_strings_are_translated_at_runtime(language, expected):
    with translation.override(language):
        message = translation.gettext(
            "You already have %(count)d active tokens. Revoke one before creating another."
        ) % {"count": 5}
    assert message.startswith(expected)


@pytest.mark.parametrize(
    ("minutes", "word"), [(1, "минуту"), (3, "минуты"), (15, "минут"), (21, "минуту")]
)
def test_russian_plurals(minutes, word):
    with translation.override("ru"):
        message = lockout_message(minutes)
    assert f"на {minutes} {word}." in message


@pytest.mark.parametrize(
    ("language", "names"),
    [
        ("ja", ["クリスプ", "クリベッジ", "トリプルクラウン"]),
        ("ru", ["Крисп", "Криббедж", "Тройная корона"]),
    ],
)
def test_every_games_name_is_translated(language: str, names: list[str]) -> None:
    """A game's name is a word of the page's language, the way its rules page writes it
    (issue 22, item 9: "Crisp" stayed in Latin letters in Japanese and Russian sentences).
    The site's own name, "Crisp online", is a brand and stays as it is."""
    with translation.override(language):
        assert [translation.gettext(engine_for(kind).NAME) for kind in KINDS] == names
