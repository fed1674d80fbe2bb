"""Numbers as a user reads them: the one formatter of every text that prints a measured value.

Python's own formats print "nan", "inf" and a negative zero ("-0" for -0.0, "-0.00" for
-0.001): in "loss nan nats" or "q·k = -0" a user reads a bug, or a sign that means nothing.
`number` (significant digits) and `fixed` (decimal places) never print "-0" (a value that
rounds to zero reads 0) and print a value that is not a number as the caller's `nan` says:
"NaN" where NaN is what a lesson shows (a row that sees no key), `MISSING` ("—") where a
number is absent, with the reason said beside it. The explorer's readouts use these
(explorer.figures.plots.fmt_number is `number`); the engine's own sentences too.
"""

from __future__ import annotations

import math

#: what a missing number reads as (the text beside it says why)
MISSING = "—"


def _special(v: float, nan: str) -> str | None:
    if math.isnan(v):
        return nan
    if math.isinf(v):
        return "inf" if v > 0 else "−inf"
    return None


def number(value: float, digits: int = 3, *, nan: str = "NaN") -> str:
    """`value` to `digits` significant digits: 0.012345 → "0.0123", -0.0 → "0", NaN → `nan`,
    ±inf → "inf" / "−inf"."""
    v = float(value)
    special = _special(v, nan)
    if special is not None:
        return special
    text = f"{v:.{digits}g}"
    return "0" if float(text) == 0 else text


def fixed(value: float, decimals: int = 2, *, nan: str = MISSING, sign: bool = False) -> str:
    """`value` with `decimals` places: 2.5 → "2.50", -0.001 → "0.00" (never "-0.00"), NaN →
    `nan`; `sign`: a + before a positive value ("+0.25"; zero has none)."""
    v = float(value)
    special = _special(v, nan)
    if special is not None:
        return special
    text = f"{v:.{decimals}f}"
    if float(text) == 0:
        return f"{0.0:.{decimals}f}"
    return f"+{text}" if sign and v > 0 else text


def tidy(value: float, decimals: int) -> float:
    """`value` rounded to `decimals` places with a negative zero made 0.0: for a format spec
    written inside a translated string ("entropy {e:.3f}"), which would print -0.0 or
    -0.0004 (an entropy of a one-hot row is −(1·ln 1) = -0.0) as "-0.000"."""
    v = float(value)
    if not math.isfinite(v):
        return v
    r = round(v, decimals)
    return 0.0 if r == 0 else r
