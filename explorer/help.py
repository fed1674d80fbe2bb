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
from engine.numbers import number
from engine.positional import alibi_slopes

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
    return number(v, 3)  # (no "-0", "NaN" spelled out)


#: words a help text quotes, per language
_WORDS = {"en": {"causal": "causal", "not causal": "not causal", "learned": "trained; random here",
                 "none": "no position term: a set, not a sequence", "turned": "pair i turned by"},
          "zh": {"causal": "因果", "not causal": "非因果", "learned": "训练得到；此处为随机",
                 "none": "没有位置项：一个集合，而不是序列", "turned": "第 i 对分量转过"}}


def position_formula(config, head: int = 0, lang: str = "en") -> str:
    """The positional encoding of `config` as a formula with its numbers (the positions
    help's "formula, now"): the sinusoid's frequencies, RoPE's θ_i, ALiBi's slope of `head`."""
    words = _WORDS.get(lang, _WORDS["en"])
    d, dk, kind = config.d_model, config.head_dim, config.positional
    if kind == "sinusoidal":
        return (f"X_p = E(token_p) + PE_p,   PE_p[2i] = sin(p·10000^(−2i/{d})),   "
                f"PE_p[2i+1] = cos(p·10000^(−2i/{d}))")
    if kind == "learned":
        return f"X_p = E(token_p) + P_p      (P: {config.key_len}×{d}, {words['learned']})"
    if kind == "rope":
        theta = [10000.0 ** (-2 * i / dk) for i in range(max(dk // 2, 1))]
        shown = ", ".join(_fmt(t) for t in theta[:3]) + (f", …, {_fmt(theta[-1])}" if len(theta) > 3 else "")
        return f"q_p, k_p: {words['turned']} p·θ_i,   θ_i = 10000^(−2i/{dk}) = {shown}"
    if kind == "alibi":
        h = min(head, config.n_heads - 1)
        m = float(alibi_slopes(config.n_heads)[h])
        return (f"score_h(i, j) += −m_h·|i − j|,   m_h = 2^(−8(h+1)/{config.n_heads}):   "
                f"m_{h} = {_fmt(m)}")
    return f"X_p = E(token_p)      ({words['none']})"

#: what the scaled scores' std means for softmax, per language: (upper bound of the std, sentence)
_SATURATION = {
    "en": ((0.3, "well below 1, so the weights are close to uniform: softmax barely chooses"),
           (2.0, "near 1, so softmax is not saturated"),
           (4.0, "above 1, so softmax leans hard on the largest scores"),
           (math.inf, "far above 1, so softmax is saturated: rows are close to one-hot and "
                      "its gradient vanishes")),
    "zh": ((0.3, "远小于 1，权重接近均匀：softmax 几乎不做选择"),
           (2.0, "在 1 附近，softmax 不会饱和"),
           (4.0, "大于 1，softmax 明显偏向最大的分数"),
           (math.inf, "远大于 1，softmax 已饱和：每行接近独热，梯度消失")),
}


def saturation_sentence(std_scaled: float, lang: str = "en") -> str:
    """What a softmax input of standard deviation `std_scaled` does (the help's verdict
    follows the numbers: a std of 16.7 is saturated, never "back near 1")."""
    if not math.isfinite(std_scaled):  # every score masked or overflowed: no verdict
        return "—"
    table = _SATURATION.get(lang, _SATURATION["en"])
    return next((sentence for bound, sentence in table if std_scaled < bound), table[-1][1])


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
        "saturation": saturation_sentence(std_raw * cfg.effective_scale, lang),
        "entropy_row": _fmt(float(ent[min(query, cfg.seq_len - 1)])),
        "log_skv": _fmt(math.log(max(cfg.key_len, 1))),
        "causal": words["causal" if cfg.causal else "not causal"],
        "position_formula": position_formula(cfg, h, lang),
        # the efficient variants (the efficient panel's help): field values as a config writes them
        "kernel": cfg.kernel, "n_features": str(cfg.n_features), "global_tokens": str(cfg.global_tokens),
        "window": "None" if cfg.window is None else str(cfg.window),
        "summary_block": "None" if cfg.summary_block is None else str(cfg.summary_block),
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
