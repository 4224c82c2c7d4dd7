"""Tables A.1, A.2 and A.4: the thesis's hyper-parameters beside the ones the code trains with."""

from __future__ import annotations

from ... import checks
from .common import COPY_HYPER, SIZES
from .psmnist import PSMNIST_HYPER, PSMNIST_MATCHED, PSMNIST_QUICK_HYPER, PSMNIST_SIZES
from .ptb import PTB_HYPER, PTB_SHARED, PTB_SIZES


def _thesis_rows(rows: str) -> list[dict]:
    """Parse the thesis's hyper-parameter rows: ``model | hid | LR | LR orth | alpha | delta | T decay | V init``."""
    out = []
    for line in rows.strip().splitlines():
        model, hid, *vals = [v.strip() for v in line.split("|")]
        num = [float(v) if v else None for v in vals[:5]]
        out.append(
            dict(
                model=model,
                hid=int(hid),
                lr=num[0],
                lr_orth=num[1],
                alpha=num[2],
                delta=num[3],
                t_decay=num[4],
                init=vals[5] or None,
            )
        )
    return out


THESIS_HYPER = {  # thesis Tables A.1, A.2 and A.4, copied from the spec (§3.1-3.3), blanks kept blank
    "A.1": _thesis_rows("""
nnRNN | 128 | 0.0005 | 1e-6 | 0.99 | 0.0001 | 1e-6 | Henaff
expRNN | 128 | 0.001 | 0.0001 | 0.99 | | | Henaff
expRNN | 176 | 0.001 | 0.0001 | 0.99 | | | Henaff
LSTM | 128 | 0.0005 | | 0.99 | | | Glorot Normal
LSTM | 63 | 0.001 | | 0.99 | | | Glorot Normal
RNN Orth | 128 | 0.0002 | | 0.99 | | | Random orth
EURNN | 128 | 0.001 | | 0.5 | | |
EURNN | 256 | 0.001 | | 0.5 | | |
RNN | 128 | 0.001 | | 0.9 | | | Glorot Normal"""),
    "A.2": _thesis_rows("""
nnRNN | 512 | 0.00015 | 1.5e-5 | 0.99 | 0.15 | 0.0001 | Cayley
expRNN | 512 | 0.0005 | 5e-5 | 0.99 | | | Cayley
expRNN | 722 | 0.0005 | 5e-5 | 0.99 | | | Cayley
LSTM | 512 | 0.0005 | | 0.9 | | | Glorot Normal
LSTM | 257 | 0.0005 | | 0.9 | | | Glorot Normal
RNN Orth | 512 | 5e-5 | | 0.99 | | | Random orth
EURNN | 512 | 0.0001 | | 0.9 | | |
EURNN | 1024 | 0.0001 | | 0.9 | | |
RNN | 512 | 0.0001 | | 0.9 | | | Glorot Normal"""),
    "A.4, T = 150": _thesis_rows("""
nnRNN | 1024 | 0.0008 | 8e-5 | 0.9 | 1 | 0.0001 | Cayley
expRNN | 1024 | 0.005 | 0.0001 | 0.9 | | | Cayley
expRNN | 1386 | 0.005 | 0.0001 | 0.9 | | | Cayley
LSTM | 1024 | 0.008 | | 0.9 | | | Glorot Normal
LSTM | 475 | 0.001 | | 0.99 | | | Glorot Normal
RNN Orth | 1024 | 0.0001 | | 0.9 | | | Random orth
EURNN | 1024 | 0.001 | | 0.9 | | |
EURNN | 2048 | 0.001 | | 0.9 | | |
RNN | 1024 | 1e-5 | | 0.9 | | | Glorot Normal"""),
    "A.4, T = 300": _thesis_rows("""
nnRNN | 1024 | 0.0008 | 6e-5 | 0.9 | 0.0001 | 0.0001 | Cayley
expRNN | 1024 | 0.005 | 0.0001 | 0.9 | | | Cayley
expRNN | 1386 | 0.005 | 0.0001 | 0.9 | | | Cayley
LSTM | 1024 | 0.008 | | 0.9 | | | Glorot Normal
LSTM | 475 | 0.003 | | 0.9 | | | Glorot Normal
RNN Orth | 1024 | 0.0001 | | 0.9 | | | Cayley
EURNN | 1024 | 0.001 | | 0.9 | | |
EURNN | 2048 | 0.001 | | 0.9 | | |
RNN | 1024 | 1e-5 | | 0.9 | | | Glorot Normal"""),
}
_INIT_NAMES = {"henaff": "Henaff", "cayley": "Cayley", "glorot": "Glorot Normal", "orth": "Random orth"}
_HYPER_FIELDS = {
    "lr": "LR",
    "lr_orth": "LR orth",
    "alpha": "α (RMSprop)",
    "delta": "δ",
    "t_decay": "T decay",
    "init": "V init",
}
_NNRNN_NOTE = "P's chosen init applied (the authors' code drops it); T kept out of Λ's 2x2 blocks"
_CODE_NOTES = {
    ("A.1", "nnRNN"): _NNRNN_NOTE,
    ("A.2", "nnRNN"): _NNRNN_NOTE,
    ("A.4", "nnRNN"): _NNRNN_NOTE,
    ("A.1", "RNN"): "tanh, as the chapter's other RNNs (thesis: modReLU)",
    ("A.2", "RNN"): "tanh, as the chapter's other RNNs (thesis: modReLU)",
    ("A.4", "EURNN"): "real, tunable capacity 2 (not stated in the thesis)",
}


def used_hyper(table: str) -> list[dict]:
    """The hyper-parameters the full profile trains with, as rows like the thesis's: ``table`` is ``"A.1"`` (copy),
    ``"A.2"`` (psMNIST) or ``"A.4, T = 150"`` / ``"A.4, T = 300"`` (PTB)."""
    checks.one_of(table, tuple(THESIS_HYPER), "table")
    init_of = {"nnRNN": "henaff", "expRNN": "henaff", "RNN": "glorot", "LSTM": "glorot"}
    if table == "A.1":
        rows = [dict(hp, model=m, hid=SIZES["full"]["copy_width"], init=init_of[m]) for m, hp in COPY_HYPER.items()]
    elif table == "A.2":
        rows = [dict(hp, model=m) for m, hp in PSMNIST_HYPER.items()]
        rows += [
            dict(PSMNIST_HYPER[m], model=m, hid=w) for m, w in PSMNIST_MATCHED.items() if w != PSMNIST_HYPER[m]["hid"]
        ]
    else:
        rows = [
            dict(r, model="RNN Orth" if r["model"] == "RNN-orth" else r["model"]) for r in PTB_HYPER[int(table[-3:])]
        ]
    for r in rows:
        if r.get("init") is None and r.get("arch", r["model"]) == "LSTM":
            r["init"] = "glorot"
    return [{"model": r["model"], "hid": r["hid"], **{k: r.get(k) for k in _HYPER_FIELDS}} for r in rows]


def hyper_table(table: str) -> list[dict]:
    """Thesis Table ``table`` rendered from :func:`used_hyper`: the values the code trains with (the thesis's where
    a row is not run), whether they equal the thesis's, and what the quick profile changes."""
    used = {(r["model"], r["hid"]): r for r in used_hyper(table)}
    out = []
    for paper in THESIS_HYPER[table]:
        code = used.get((paper["model"], paper["hid"]))
        src = code or paper
        row = {"model": paper["model"], "N": paper["hid"]}
        for k, name in _HYPER_FIELDS.items():
            v = src[k]
            row[name] = "" if v is None else _INIT_NAMES.get(v, v) if k == "init" else f"{v:g}"
        if code is None:
            row["vs thesis"] = "not run (thesis row shown)"
        else:
            diffs = [
                f"{name}: thesis {paper[k]}"
                for k, name in _HYPER_FIELDS.items()
                if (_INIT_NAMES.get(code[k], code[k]) if k == "init" else code[k]) != paper[k]
                and not (k == "init" and paper[k] is None)
            ]
            row["vs thesis"] = "; ".join(diffs) or "= thesis"
        row["notes"] = _CODE_NOTES.get((table[:3], paper["model"]), "") if code else ""
        out.append(row)
    missing = set(used) - {(p["model"], p["hid"]) for p in THESIS_HYPER[table]}
    if missing:
        raise ValueError(f"the code runs rows the thesis's Table {table} does not have: {sorted(missing)}")
    return out


def quick_hyper_note(table: str) -> str:
    """What the quick profile changes in Table ``table``'s set-up (read from the quick sizes and rates)."""
    checks.one_of(table, tuple(THESIS_HYPER), "table")
    if table == "A.1":
        q = SIZES["quick"]
        return f"copy length T = {q['copy_T']}, N = {q['copy_width']}, {q['copy_iters']} steps, the rates above"
    if table == "A.2":
        q, hp = PSMNIST_SIZES["quick"], PSMNIST_QUICK_HYPER["nnRNN"]
        side = 28 // q["pool"]
        return (
            f"{side}x{side} pooled digits, N = {q['widths']['nnRNN']} (equal parameters: "
            + ", ".join(f"{m} {w}" for m, w in q["matched"].items() if w != q["widths"][m])
            + f"), LR {hp['lr']:g} and LR orth {hp['lr_orth']:g} for every model, nnRNN δ = {hp['delta']:g}"
        )
    q = PTB_SIZES["quick"]
    return (
        f"N = {q['width']} (equal width only), LR {PTB_SHARED['lr']:g} and LR orth {PTB_SHARED['lr_orth']:g} "
        f"for every model, α = {PTB_SHARED['alpha']:g}; other columns as above"
    )
