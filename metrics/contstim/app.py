"""The metric Space's app: a table of trials in, the metric's result (JSON) out.

evaluate's own ``launch_gradio_widget`` uses the Gradio 3 API (``gr.inputs``), which current
Gradio no longer has, so the widget is built here with ``gr.Interface``.  The table's columns are
the metric's features; its example is the card's worked example (three participants, two pairs).
``GRADIO_SERVER_NAME`` / ``GRADIO_SERVER_PORT`` choose where it listens.  The cells reach the
metric as they were entered (nothing rounded or truncated); when the metric refuses them, its
message is what the user sees.  API: ``/compute`` (table, model_name) -> JSON text.
"""
import glob
import json
import os

import evaluate
import gradio as gr

# The metric script is the one other .py file next to this app (named after the Space).
HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = [p for p in sorted(glob.glob(os.path.join(HERE, "*.py"))) if os.path.basename(p) != "app.py"][0]

module = evaluate.load(SCRIPT)
FEATURES = list(module.features)
KINDS = {name: str(feature.dtype) for name, feature in module.features.items()}
EXAMPLE = [
    [2.0, 6, "p1", 1, "a", "I saw it.", "Saw I it.", "synthetic_vs_synthetic", "m", "other", "other", "m"],
    [-1.5, 2, "p1", 1, "b", "It was late.", "Late it was.", "synthetic_vs_synthetic", "m", "other", "other", "m"],
    [2.0, 5, "p2", 1, "a", "I saw it.", "Saw I it.", "synthetic_vs_synthetic", "m", "other", "other", "m"],
    [-1.5, 1, "p2", 1, "b", "It was late.", "Late it was.", "synthetic_vs_synthetic", "m", "other", "other", "m"],
    [2.0, 3, "p3", 1, "a", "I saw it.", "Saw I it.", "synthetic_vs_synthetic", "m", "other", "other", "m"],
    [-1.5, 4, "p3", 1, "b", "It was late.", "Late it was.", "synthetic_vs_synthetic", "m", "other", "other", "m"],
]


def _raw(value):
    """A table cell as the user entered it, for the metric to validate: numpy scalars become the
    Python number they hold, an empty cell None; nothing is rounded or truncated (the metric
    refuses a rating of 3.5 or 9 and names it)."""
    if hasattr(value, "item"):
        value = value.item()
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, float) and value != value:  # an empty numeric cell arrives as NaN
        return None
    return value


def compute(table, model_name: str) -> str:
    """The metric's result for the rows of ``table`` (one trial per row), as indented JSON; the
    metric's own message (it validates every input) when the input is refused."""
    rows = table.values.tolist() if hasattr(table, "values") else list(table)
    columns = {name: [_raw(row[i]) for row in rows] for i, name in enumerate(FEATURES)}
    try:
        out = module.compute(model_name=model_name or "model", **columns)
    except (ValueError, TypeError) as exc:
        raise gr.Error(str(exc)) from None
    return json.dumps(out, indent=1, default=float)


demo = gr.Interface(
    fn=compute,
    inputs=[gr.Dataframe(headers=FEATURES, value=EXAMPLE, label="trials",
                         datatype=["number" if KINDS[n].startswith(("float", "int")) else "str" for n in FEATURES]),
            gr.Textbox(value="m", label="model_name")],
    outputs=gr.Code(language="json", label=module.name),
    title=f"Metric: {module.name}",
    description=module.info.description,
    flagging_mode="never",
    api_name="compute",
)

if __name__ == "__main__":
    demo.launch()
