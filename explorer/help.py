"""Panel help: what a panel draws, how to read it, its formula with today's numbers.

Qt-free. One Markdown file per panel and language, `assets/help/<lang>/<panel>.md`,
written like the lesson texts (first line `# Title`). `{name}` placeholders are
replaced with the current config's numbers (`help_values`), so the formula a
student reads is the one on screen: `softmax(QKᵀ · {scale})` reads
`softmax(QKᵀ · 0.25)`. Links `lesson:NN-name` open that lesson chapter.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

from assets import asset_path

from .frame import Frame, finite_std

HELP_DIR = asset_path("help")
#: the help shown when no panel is meant (F1 over the window itself)
OVERVIEW = "overview"
_PLACEHOLDER = re.compile(r"\{([A-Za-z_]+)\}")


def help_path(name: str, lang: str) -> Path:
    """The help file of panel `name` in `lang`, falling back to English."""
    path = HELP_DIR / lang / f"{name}.md"
    return path if path.exists() else HELP_DIR / "en" / f"{name}.md"


def has_help(name: str, lang: str = "en") -> bool:
    return (HELP_DIR / lang / f"{name}.md").exists()


def _fmt(v: float) -> str:
    text = f"{v:.3g}"
    return "0" if float(text) == 0 else text


#: words a help text quotes, per language
_WORDS = {"en": {"causal": "causal", "not causal": "not causal"}, "zh": {"causal": "因果", "not causal": "非因果"}}


def help_values(frame: Frame | None, head: int = 0, query: int = 0, key: int = 0,
                lang: str = "en") -> dict[str, str]:
    """The numbers a help text may quote, as text. Without a frame: none."""
    if frame is None:
        return {}
    words = _WORDS.get(lang, _WORDS["en"])
    cfg = frame.config
    h = min(head, cfg.n_heads - 1)
    std_raw = finite_std(frame.scores_raw[h])  # as the score histogram reads it
    ent = frame.entropy[h]
    return {
        "S": str(cfg.seq_len), "Skv": str(cfg.key_len), "d_model": str(cfg.d_model),
        "H": str(cfg.n_heads), "Hkv": str(cfg.kv_heads), "group": str(cfg.group_size),
        "d_k": str(cfg.head_dim), "sqrt_dk": _fmt(math.sqrt(cfg.head_dim)),
        "scale": _fmt(cfg.effective_scale), "head": str(h), "kv_head": str(cfg.kv_head_of(h)),
        "query": str(min(query, cfg.seq_len - 1)), "key": str(min(key, cfg.key_len - 1)),
        "dtype": cfg.dtype, "mask_value": cfg.mask_value, "positional": cfg.positional,
        "kind": cfg.attention_kind, "std_raw": _fmt(std_raw),
        "std_scaled": _fmt(std_raw * cfg.effective_scale),
        "entropy_row": _fmt(float(ent[min(query, cfg.seq_len - 1)])),
        "log_skv": _fmt(math.log(max(cfg.key_len, 1))),
        "causal": words["causal" if cfg.causal else "not causal"],
    }


def render_help(text: str, values: dict[str, str]) -> str:
    """`text` with every known {placeholder} replaced (unknown ones, and all of them without
    a frame, stay as their names: the formula in letters)."""
    return _PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(1)), text)


def load_help(name: str, lang: str, values: dict[str, str] | None = None) -> tuple[str, str]:
    """(title, Markdown body) of panel `name`'s help in `lang`, numbers filled in."""
    text = help_path(name, lang).read_text(encoding="utf-8").strip()
    first, _, body = text.partition("\n")
    title = first[2:].strip() if first.startswith("# ") else name
    return title, render_help(body.strip(), values or {})


def placeholders(name: str, lang: str) -> set[str]:
    """The placeholder names a help file uses (the tests check each is known)."""
    return set(_PLACEHOLDER.findall(help_path(name, lang).read_text(encoding="utf-8")))
