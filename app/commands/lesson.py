"""heads-positions lesson: the lesson's two experiments, printed or as JSON."""

import json
import sys

from model.assets import VOCAB_PATH
from model.experiments import LESSON_LINES, head_split, order_sensitivity
from model.gpt import POSITION_MODES
from model.tokenizer import CharTokenizer

TEXT = {
    "zh": {
        "order": "1. “{a}”与“{b}”：最后一个位置的输出相差多少（未训练，{position}，种子 {seed}）",
        "row": "  {n} 层：去掉位置信息 {without:.1e}，带位置信息 {with_:.1e}",
        "heads": "2. 多头切分：{n_embd} 维向量分成 {n_head} 个头",
        "shapes": "  q {q} → 分头 {heads} → 注意力分数 {scores}",
        "params": "  {n_head} 个头：qkv {qkv}，proj {proj}",
        "unknown": "词表里没有这些字符，已按未知字符处理：{chars}",
    },
    "ja": {
        "order": "1. 「{a}」と「{b}」：最後の位置の出力の差（未学習、{position}、シード {seed}）",
        "row": "  {n} 層：位置情報なし {without:.1e}、位置情報あり {with_:.1e}",
        "heads": "2. マルチヘッドの分割：{n_embd} 次元のベクトルを {n_head} ヘッドに",
        "shapes": "  q {q} → ヘッドに分割 {heads} → スコア {scores}",
        "params": "  {n_head} ヘッド：qkv {qkv}、proj {proj}",
        "unknown": "語彙にない文字は未知の文字として扱いました：{chars}",
    },
    "fr": {
        "order": "1. « {a} » et « {b} » : écart en dernière position (non entraîné, {position}, graine {seed})",
        "row": "  {n} couche(s) : sans position {without:.1e}, avec position {with_:.1e}",
        "heads": "2. Découpage en têtes : un vecteur de {n_embd} dimensions en {n_head} têtes",
        "shapes": "  q {q} → têtes {heads} → scores {scores}",
        "params": "  {n_head} tête(s) : qkv {qkv}, proj {proj}",
        "unknown": "Caractères hors du vocabulaire, traités comme inconnus : {chars}",
    },
    "en": {
        "order": "1. '{a}' vs '{b}': last-position output difference (untrained, {position}, seed {seed})",
        "row": "  {n} layer(s): without position {without:.1e}, with position {with_:.1e}",
        "heads": "2. The head split: a {n_embd}-wide vector in {n_head} heads",
        "shapes": "  q {q} -> heads {heads} -> scores {scores}",
        "params": "  {n_head} head(s): qkv {qkv}, proj {proj}",
        "unknown": "Characters outside the vocabulary, treated as unknown: {chars}",
    },
}


def add_parser(sub) -> None:
    p = sub.add_parser("lesson", help="print the lesson's experiments",
                       description="The lesson's table (1, 2, 3 layers) and the head split, on untrained models.")
    p.add_argument("--lang", choices=sorted(TEXT), default="zh", help="language of the report (default zh)")
    p.add_argument("--lines", nargs=2, metavar=("A", "B"), default=LESSON_LINES, help="the two lines to compare")
    p.add_argument("--position", choices=POSITION_MODES, default="learned",
                   help="position mode of the models (default learned)")
    p.add_argument("--seed", type=int, default=0, help="seed of the untrained weights (default 0)")
    p.add_argument("--json", action="store_true", help="print machine-readable JSON")
    p.set_defaults(run=run)


def run(args) -> int:
    tokenizer = CharTokenizer.load(VOCAB_PATH)
    line_a, line_b = args.lines
    for name, line in (("A", line_a), ("B", line_b)):
        if not line:
            print(f"--lines: line {name} is empty; give two non-empty lines", file=sys.stderr)
            return 2
        if len(line) > 128 and args.position == "learned":
            print(f"--lines: line {name} has {len(line)} characters; pos_emb has 128 rows", file=sys.stderr)
            return 2
    unknown = sorted({c for line in args.lines for c, u in zip(line, tokenizer.encode(line).unknown) if u})
    report = {
        "lines": [line_a, line_b],
        "position": args.position,
        "seed": args.seed,
        "unknown": unknown,
        "order": order_sensitivity(tokenizer, line_a, line_b, position=args.position, seed=args.seed),
        "heads": head_split(),
    }
    if args.json:
        print(json.dumps(report, ensure_ascii=False, indent=2))
    else:
        print(render(report, TEXT[args.lang]))
    return 0


def render(report: dict, t: dict) -> str:
    a, b = report["lines"]
    out = []
    if report["unknown"]:
        out.append(t["unknown"].format(chars=" ".join(report["unknown"])))
    out.append(t["order"].format(a=a, b=b, position=report["position"], seed=report["seed"]))
    for row in report["order"]:
        out.append(t["row"].format(n=row["n_layer"], without=row["without_position"]["max_abs"],
                                   with_=row["with_position"]["max_abs"]))
    heads = report["heads"]
    out.append(t["heads"].format(n_embd=heads["n_embd"], n_head=heads["n_head"]))
    shapes = {k: tuple(v) for k, v in heads["shapes"].items()}
    out.append(t["shapes"].format(**shapes))
    out.extend(t["params"].format(**p) for p in heads["params"])
    return "\n".join(out)
