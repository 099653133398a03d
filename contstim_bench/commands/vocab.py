"""``contstim vocab build --corpus FILE --min-count N --out FILE``: a synthesis vocabulary for
another domain (see :mod:`contstim_bench.generate.vocabulary`)."""
from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("vocab", help="build a synthesis vocabulary from a corpus of another domain",
                       description="Vocabularies for `contstim generate synthetic --vocabulary FILE`.")
    vsub = p.add_subparsers(dest="vocab_command", metavar="ACTION")
    b = vsub.add_parser(
        "build", help="count the words of a corpus and keep the frequent ones",
        description=("Count the words of a text corpus (one sentence per line; words of letters only, punctuation "
                     "stripped) and keep those counted at least --min-count times, as the paper's vocabulary kept "
                     "the words seen at least 300 times in its 300M-word corpus (one in a million). Writes the "
                     "words with their frequencies for both lists (other positions, and capitalised for the first "
                     "word): a file for `contstim generate synthetic --vocabulary FILE [--vocabulary-size N]`."))
    b.add_argument("--corpus", required=True, metavar="FILE", help="UTF-8 text corpus, one sentence per line")
    b.add_argument("--min-count", type=int, required=True, metavar="N",
                   help="keep the words counted at least N times (the paper: one in a million words)")
    b.add_argument("--out", required=True, metavar="FILE", help="vocabulary file to write (.parquet or .csv)")
    b.set_defaults(func=_build)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


def _build(args) -> int:
    from ..generate.vocabulary import build_vocabulary, write_vocabulary
    from ..staging import check_inputs_kept

    check_inputs_kept([("--out", args.out)], [("--corpus", args.corpus)])
    table = build_vocabulary(args.corpus, args.min_count)
    path = write_vocabulary(table, args.out)
    words = table[~table["capitalized"]]
    print(f"wrote {path}: {len(words):,} words counted at least {args.min_count} times "
          f"({int(words['count'].sum()):,} tokens in the corpus), and {int(table['capitalized'].sum()):,} "
          f"capitalised for the first word")
    return 0
