"""``contstim train ngram|rnn|lstm``: train the n-gram, RNN and LSTM reference-model families.

Without ``--corpus`` the models are trained on the benchmark's own small corpus: the ``train``
part (4,907 lines) of the 6,113 natural sentences of Golan et al. 2023 (``contstimlang/resources/
sentence_corpora/natural_sentences_for_synthetic_controversial_sentence_pair_optimization.txt``,
resolved and verified like every raw source), a fixed split by content
(:mod:`contstim_bench.data.pool_split`) that holds out the ``start`` part from which ``contstim
generate`` draws its start sentences and natural pairs by default, so that everything works
offline and no default start sentence was seen in training.  The paper's models were
trained on a far larger corpus (Reddit, Wikipedia, Gutenberg, local news); pass ``--corpus``
(one sentence per line, words separated by whitespace) to train on your own.  The training runs
are :func:`contstim_bench.scoring.training.train_ngram` and ``train_recurrent``.
"""
from __future__ import annotations

import argparse

from ._common import positive_int


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("train", help="train an n-gram (KenLM ARPA), RNN or LSTM language model")
    tsub = p.add_subparsers(dest="train_command", metavar="MODEL")

    ng = tsub.add_parser("ngram", help="modified Kneser-Ney n-gram model, written as ARPA")
    _corpus_args(ng)
    ng.add_argument("--order", type=int, default=3, help="n-gram order, 2 to 6 (what KenLM loads; default 3, the paper's trigram)")
    ng.add_argument("--output", required=True, help="ARPA file to write")
    ng.add_argument("--backend", choices=("auto", "lmplz", "python"), default="auto",
                    help="auto: KenLM's lmplz when on PATH, else the built-in estimator")
    ng.add_argument("--discount-fallback", nargs="*", type=float, metavar="D",
                    help="discounts D1 D2 D3+ to use when they cannot be estimated (default 0.5 1 1.5 "
                         "when the flag is given without values), as lmplz --discount_fallback")
    ng.add_argument("--memory", default="1G", help="lmplz -S memory budget (default 1G)")
    ng.set_defaults(func=_train_ngram)

    for kind, label in (("rnn", "simple recurrent network (ReLU)"), ("lstm", "long short-term memory network")):
        r = tsub.add_parser(kind, help=f"word-level {label} language model")
        _corpus_args(r)
        r.add_argument("--output", required=True, help="checkpoint folder to write")
        r.add_argument("--epochs", type=int, default=10, help="passes over the corpus (default 10; the paper used 50)")
        r.add_argument("--seed", type=int, default=0, help="seed of the initial weights and the sentence order")
        r.add_argument("--max-vocab", type=int, default=None, help="keep the N most frequent words (others -> <unk>)")
        r.add_argument("--min-count", type=int, default=1, help="drop words seen fewer times (-> <unk>)")
        r.add_argument("--batch-size", type=positive_int, default=64, help="sentences per optimisation step")
        r.add_argument("--lr", type=float, default=0.002, help="Adam learning rate (default: the paper's 0.002)")
        r.add_argument("--embed-size", type=int, default=256, help="embedding size (default: the paper's 256)")
        r.add_argument("--hidden-size", type=int, default=512, help="hidden-state size (default: the paper's 512)")
        r.add_argument("--num-layers", type=int, default=1, help="recurrent layers (default 1)")
        r.add_argument("--max-steps", type=int, default=None, help="stop after this many steps")
        r.add_argument("--device", default=None, help="torch device (default: cuda if available, else cpu)")
        r.set_defaults(func=_train_recurrent, kind=kind)
    p.set_defaults(func=lambda a: (p.print_help(), 2)[1])


def _corpus_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--corpus", help="text file, one sentence per line (default: the 'train' part, 4,907 lines, of the "
                        "benchmark's 6,113-sentence synthesis pool, held out from generation's start sentences)")
    p.add_argument("--source", help="raw-data folder for the default corpus (default: the usual source resolution)")


def _train_ngram(args) -> int:
    from ..scoring.training import train_ngram

    done = train_ngram(args.output, corpus=args.corpus, source=args.source, order=args.order, backend=args.backend,
                       discount_fallback=args.discount_fallback, memory=args.memory)
    print(f"wrote {done.output} (backend {done.backend}, {done.sentences} sentences, "
          + ", ".join(f"{n}-grams: {c}" for n, c in done.counts) + ")")
    return 0


def _train_recurrent(args) -> int:
    from ..scoring.training import train_recurrent

    done = train_recurrent(
        args.kind, args.output, corpus=args.corpus, source=args.source, epochs=args.epochs, seed=args.seed,
        max_vocab=args.max_vocab, min_count=args.min_count, batch_size=args.batch_size, lr=args.lr,
        embed_size=args.embed_size, hidden_size=args.hidden_size, num_layers=args.num_layers,
        max_steps=args.max_steps, device=args.device, progress=True,
    )
    result = done.result
    losses = ", ".join(f"{x:.3f}" for x in result.epoch_losses)
    print(f"wrote {done.output} ({args.kind}, vocabulary {len(result.vocab)}, {len(result.step_losses)} steps, "
          f"epoch losses [{losses}] nats/token, {result.seconds:.1f} s)")
    return 0
