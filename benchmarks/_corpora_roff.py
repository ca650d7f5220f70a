"""Plain text from man(7) / mdoc(7) roff sources, standard library only.

``roff_blocks(source)`` returns ``[(section heading, paragraph text), ...]``:
requests that only format are dropped, font and size escapes removed,
special characters mapped to Unicode, tables, macro definitions, conditional
blocks and code examples (``.EX``/``.EE``, pod2man's ``.Vb``/``.Ve``) skipped,
and the text between paragraph-breaking macros joined into one line.  Good
enough for running text; code-like leftovers are for the caller to filter.
"""

from __future__ import annotations

import re
import shlex

# roff special characters worth keeping (others become "").
_CHARS = {
    "em": "\u2014", "en": "\u2013", "hy": "-", "mi": "-", "aq": "'", "dq": '"',
    "lq": "\u201c", "rq": "\u201d", "oq": "\u2018", "cq": "\u2019", "bu": "\u2022",
    "co": "\u00a9", "rg": "\u00ae", "tm": "\u2122", "mu": "\u00d7", "+-": "\u00b1",
    "<=": "\u2264", ">=": "\u2265", "!=": "\u2260", "->": "\u2192", "<-": "\u2190",
    "ti": "~", "ha": "^", "rs": "\\", "sl": "/", "ga": "`", "ba": "|", "or": "|",
    "ul": "_", "Fo": "\u00ab", "Fc": "\u00bb", "fo": "\u2039", "fc": "\u203a",
    "de": "\u00b0", "sc": "\u00a7", "pl": "+", "eq": "=", "lh": "\u261c",
    "rh": "\u261e", "ua": "\u2191", "da": "\u2193", "if": "\u221e", "Po": "\u00a3",
    "ct": "\u00a2", "Eu": "\u20ac", "eu": "\u20ac", "ss": "\u00df", "12": "\u00bd",
}
_STRINGS = {"lq": "\u201c", "rq": "\u201d", "R": "\u00ae", "Tm": "\u2122",
            "Lq": "\u201c", "Rq": "\u201d", "Aq": "'", "dq": '"'}
_SIMPLE = {"-": "-", "e": "\\", "\\": "\\", " ": " ", "~": " ", "0": " ", "t": " ",
           "`": "`", "'": "\u00b4", ".": ".", '"': '"'}

_ESCAPE = re.compile(
    r"""\\(?:
        (?P<font>f(?:\(..|\[[^\]]*\]|.))
      | (?P<size>s(?:[+-]?\d\d?|\(..|\[[^\]]*\]|[+-]?\[[^\]]*\]))
      | \*(?P<string>\(..|\[[^\]]*\]|.)
      | \((?P<char2>..)
      | \[(?P<charn>[^\]]*)\]
      | (?P<quoted>[NhvwlLoXDbZHSRAxCBV])'[^']*'
      | (?P<reg>[nmgFkYz](?:\(..|\[[^\]]*\]|.))
      | (?P<drop>[&|^%:c/,)!{}?pdru])
      | (?P<other>.)
    )""",
    re.VERBOSE | re.DOTALL,
)


def _char(name: str) -> str:
    if name in _CHARS:
        return _CHARS[name]
    m = re.fullmatch(r"u([0-9A-Fa-f]{4,6})(?:_[0-9A-Fa-f]{4,6})*", name)
    if m:
        return "".join(chr(int(p.lstrip("u"), 16)) for p in name.split("_"))
    if len(name) == 2 and name[0] in "'`^:,~" and name[1].isalpha():
        return name[1]  # accented letter: keep the base letter
    return ""


def _unescape_match(m: re.Match) -> str:
    if m.group("font") or m.group("size") or m.group("quoted") or m.group("reg"):
        return ""
    if m.group("drop"):
        return ""
    s = m.group("string")
    if s is not None:
        key = s[1:] if s.startswith("(") else s.strip("[]")
        return _STRINGS.get(key, "")
    if m.group("char2") is not None:
        return _char(m.group("char2"))
    if m.group("charn") is not None:
        return _char(m.group("charn"))
    o = m.group("other")
    return _SIMPLE.get(o, o)


def unescape(text: str) -> str:
    """Inline roff escapes to plain text."""
    return _ESCAPE.sub(_unescape_match, text)


def _strip_comment(line: str) -> str:
    # \" starts a comment unless the backslash is itself escaped
    m = re.search(r'(?<!\\)(?:\\\\)*\\"', line)
    return line[: m.start() + (len(m.group(0)) - 2)] if m else line


def _args(rest: str) -> list[str]:
    try:
        return shlex.split(rest.replace("\\ ", "\x00"), posix=True)
    except ValueError:
        return rest.split()


# Macros that end a paragraph (man and mdoc).
_BREAK = {"PP", "LP", "P", "IP", "TP", "TQ", "HP", "RS", "RE", "sp", "in", "ti", "nf", "fi",
          "SY", "YS", "Pp", "Bl", "El", "It", "Bd", "Ed", "Ip", "Sp", "PD", "ne"}
_FONT_ALT = {"BR", "RB", "IR", "RI", "BI", "IB"}
_FONT_ONE = {"B", "I", "SM", "SB", "R"}
_SKIP_BLOCK = {"EX": "EE", "Vb": "Ve", "TS": "TE", "EQ": "EN", "PS": "PE", "ig": ".."}


def roff_blocks(source: str) -> list[tuple[str, str]]:
    """``[(heading, paragraph), ...]`` of a man page source (empty for ``.so`` links)."""
    blocks: list[tuple[str, str]] = []
    heading = ""
    para: list[str] = []
    want_heading = False

    def flush():
        text = " ".join(" ".join(para).split())
        if text:
            blocks.append((heading, text))
        para.clear()

    lines = source.splitlines()
    i = 0
    skip_until = None
    depth = 0  # inside .if/.ie \{ ... \} blocks
    while i < len(lines):
        raw = lines[i]
        i += 1
        if skip_until is not None:
            if raw.startswith("." + skip_until) or (skip_until == ".." and raw.strip() == ".."):
                skip_until = None
            continue
        if depth:
            depth += raw.count("\\{") - raw.count("\\}")
            depth = max(depth, 0)
            continue
        if raw.startswith(('.\\"', "'\\\"", '.\\\\"')) or raw.strip() in {".", "'"}:
            continue
        line = _strip_comment(raw)
        if line[:1] in {".", "'"}:
            body = line[1:].lstrip()
            name, _, rest = body.partition(" ")
            name = name.strip()
            rest = rest.strip()
            if name == "so":
                return []  # a link to another page
            if name in _SKIP_BLOCK:
                flush()
                skip_until = _SKIP_BLOCK[name]
                continue
            if name == "de" or name == "de1" or name == "am":
                skip_until = ".."
                continue
            if name in {"if", "ie", "el"}:
                opened = line.count("\\{") - line.count("\\}")
                if opened > 0:
                    depth = opened
                continue
            if name in {"SH", "SS", "Sh", "Ss"}:
                flush()
                if rest:
                    heading = unescape(" ".join(_args(rest))).strip()
                    want_heading = False
                else:
                    want_heading = name
                continue
            if name in _BREAK:
                flush()
                if name in {"IP", "Ip", "It"} and rest:
                    tag = _args(rest)
                    if tag and name != "It":
                        para.append(unescape(tag[0]))
                    elif name == "It":
                        para.append(unescape(rest))
                continue
            if name in _FONT_ALT:
                para.append(unescape("".join(_args(rest))))
                continue
            if name in _FONT_ONE or name in {"UE", "ME", "OP", "Nd", "Dq", "Sq", "Pq", "Ql"}:
                if rest:
                    para.append(unescape(" ".join(_args(rest))))
                continue
            if name in {"UR", "MT", "TH", "Dd", "Dt", "Os"}:
                continue
            if re.fullmatch(r"[A-Z][a-z]", name) and rest:
                # other mdoc semantic macros (.Nm, .Ar, .Xr ...): keep the words
                words = [w for w in _args(rest) if not re.fullmatch(r"[A-Z][a-z]", w)]
                para.append(unescape(" ".join(words)))
            continue  # any other request only formats
        if want_heading:
            heading = unescape(line).strip().strip('"')
            want_heading = False
            continue
        if not line.strip():
            flush()
            continue
        para.append(unescape(line))
    flush()
    return blocks
