#!/bin/sh
# Re-extract the interface strings of explorer/ into the translation sources (.ts).
#
#   sh packaging/update_translations.sh        (or: make translations-update)
#
# New or changed strings arrive as type="unfinished": translate them in Qt Linguist
# (.venv/bin/pyside6-linguist assets/translations/attention_explorer_zh_CN.ts) or in the XML,
# then `make translations` builds the .qm files the app loads. The test suite fails while a
# string is untranslated. Strings that left the code are dropped (-no-obsolete). New Chinese
# characters may need a new font subset: python packaging/subset_font.py (assets/fonts/README.md).
set -eu
cd "$(dirname "$0")/.."
LUPDATE=${LUPDATE:-.venv/bin/pyside6-lupdate}
PY=${PY:-.venv/bin/python}
# lupdate reads Python files given by name (a directory scan skips .py)
FILES=$(find explorer -name '*.py' ! -path '*/__pycache__/*' | LC_ALL=C sort)
for ts in assets/translations/attention_explorer_*.ts; do
    # shellcheck disable=SC2086 # one argument per file
    "$LUPDATE" $FILES -no-obsolete -locations relative -ts "$ts"
    # lupdate reads every `#:` comment (here: Sphinx-style notes on constants) as a note for
    # the translator of the next string, which only misleads: drop them
    "$PY" - "$ts" <<'PYEOF'
import re
import sys

path = sys.argv[1]
with open(path, encoding="utf-8") as f:
    text = f.read()
with open(path, "w", encoding="utf-8") as f:
    f.write(re.sub(r"\n[ \t]*<extracomment>.*?</extracomment>", "", text, flags=re.S))
PYEOF
done
