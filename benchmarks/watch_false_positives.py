"""`pitfalls watch --pedantic` on real training code: what fires, and whether it was right.

    .venv/bin/python benchmarks/watch_false_positives.py [--json reports/watch-false-positives.json] [NAME ...]

Each program of ``benchmarks/watch_fp_programs/`` is a short copy of public example code (its
top names the repository, the file and the commit, and the edits: a random dataset of the
original's shapes in place of a download, a few steps, no files written). The script copies it
into a temporary folder and runs it there in a fresh interpreter, twice: once bare (for the
time), once with ``Watcher(pedantic=True)`` switched on around it, which is every detector, the
sound ones and the heuristic ones, and the explainer of torch's own errors and warnings. Every
finding is listed with its case, its line in the vendored file, its count, and a verdict from
``VERDICTS`` below: written by hand after reading the line and the finding, "right" (the pitfall
is there) or "wrong" (a false positive), with one line why. ``looked`` counts, per case, how often
its detector examined something (a watched torch call, a module or optimizer hook), so that a
silent detector is seen to have looked. A finding with no verdict is
"unjudged", and the script then exits 1, so a new firing cannot slip into the report unread.

The programs run on the CPU, one at a time (the machine may be shared); the whole study takes
two to three minutes on two shared cores (22 programs). Standard library only, plus the harness and torch.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROGRAMS_DIR = Path(__file__).resolve().parent / "watch_fp_programs"
DEFAULT_JSON = ROOT / "reports" / "watch-false-positives.json"

# What each program runs, in the steps of its own loop (what "a few steps" means for it).
STEPS = {
    "word_language_model": "LSTM (tied weights, manual SGD): 2 epochs x 6 batches + evaluate(); "
    "Transformer (AdamW): 2 epochs x 6 batches + evaluate()",
    "dcgan": "3 iterations (D and G steps), batch 8 of 64x64 images, one sample from fixed noise",
    "vae": "2 epochs x 4 training batches + test() of 2 batches + sampling",
    "mnist": "2 epochs x 3 training batches (Adadelta, StepLR) + test() of 2 batches",
    "mingpt": "2 epochs x (3 training batches + 3 test batches), a 2-layer GPT, AdamW with decay groups",
    "moco": "4 MoCo v2 steps (SGD): query encoder, momentum key encoder under no_grad, queue of 64",
    "reinforce": "6 REINFORCE episodes of 5 to 30 steps (Adam), a CartPole stand-in",
    "mnist_rnn": "2 epochs x 3 training batches (Adadelta, StepLR) + test() of 2 batches",
    "time_sequence_prediction": "2 LBFGS steps (closure, max_iter 4) + no_grad prediction of 50 future steps",
    "regression": "up to 200 batches of manual SGD (fc.zero_grad, param.data.add_)",
    "fast_neural_style": "3 training batches of TransformerNet against a frozen VGG stand-in (content and "
    "Gram-matrix style losses) + stylize() of one image under no_grad",
    "gat": "5 epochs (train step + two evaluations each) + test, a 300-node random graph",
    "mnist_forward_forward": "2 layers x 20 epochs of forward-forward training (Adam per layer) + predict",
    "super_resolution": "2 epochs x 3 batches (Adam) + test() of 2 batches",
    "torch_transformer": "4 steps of nn.Transformer (Adam, clip_grad_norm_) + 2 no_grad validation "
    "batches each + greedy decoding under inference_mode",
    "transfer_learning": "fine-tuning a ResNet stand-in, then training only fc over the frozen one "
    "(requires_grad = False): 2 epochs x (4 train + 2 val batches) each, SGD + StepLR, the best "
    "checkpoint reloaded, visualize_model() under eval/no_grad",
    "char_rnn_classification": "300 names through a hand-written RNN (rnn.zero_grad, manual "
    "p.data.add_ update) + 100-name confusion matrix + 3 predictions under no_grad",
    "seq2seq_translation": "40 pairs through a GRU encoder and attention GRU decoder (two SGD "
    "optimizers, teacher forcing half the time) + 5 greedy translations under no_grad",
    "reinforcement_q_learning": "6 DQN episodes of 5 to 30 steps (RMSprop, batch 16 from replay, "
    "grad clamped through .data), target network copied by load_state_dict every 2 episodes",
    "nanogpt": "7 iterations x 2 accumulated micro-batches of a 2-layer GPT (AdamW decay groups, "
    "GradScaler (disabled without CUDA), clip_grad_norm_, cosine lr) + 3 estimate_loss() of "
    "4 batches per split, a checkpoint when val improves",
    "siamese_network": "2 epochs x 12 training batches of image pairs (Adadelta, StepLR) + test() of 2 "
    "batches, a shared ResNet stand-in on both images",
    "image_captioning": "2 epochs x 4 batches of a frozen-backbone CNN encoder + batch_first LSTM "
    "decoder (Adam over decoder, linear, bn), checkpoints reloaded by sample.py's eval-mode encoder",
}

# (program, case, a piece of the flagged line's source) -> (verdict, why). Filled after reading
# each firing of the run; the line's source, not its number, so that an edit elsewhere in the
# file keeps the verdict attached to the code it judged.
VERDICTS: dict[tuple[str, str, str], tuple[str, str]] = {
    # Fired on the first runs of this study (3 times); loss-append-keeps-graph judges accumulation
    # across steps since commit 4c6890d and no longer fires here. Kept: it says why, if it comes back.
    ("dcgan", "loss-append-keeps-graph", "errD = errD_real + errD_fake"): (
        "wrong",
        "errD is rebuilt every iteration from two losses whose backward already ran (their saved "
        "tensors freed) and is read once with .item(); nothing accumulates across steps: a false "
        "positive of a sound detector, which takes any sum of backpropagated losses for accumulation",
    ),
    ("mingpt", "train-eval-mode", "_, loss = self.model(source, targets)"): (
        "right",
        "Trainer evaluates the test set under torch.set_grad_enabled(False) but never calls "
        "model.eval(), as in the original trainer.py: the GPT's dropout (embedding, attention, "
        "residual, p=0.1) stays on, so the test loss is noisy and depends on the draw",
    ),
    ("torch_transformer", "mha-mismatched-mask-types", "out = self.transformer("): (
        "right",
        "torch warned (a UserWarning) that a float causal tgt_mask "
        "(generate_square_subsequent_mask) is combined with boolean key-padding masks, the "
        "deprecated mix that case records; the fix is masks of one type",
    ),
    ("seq2seq_translation", "train-eval-mode", "decoder_output, decoder_hidden, decoder_attention = decoder("): (
        "right",
        "evaluate() decodes under torch.no_grad() but the tutorial never calls .eval(): "
        "AttnDecoderRNN's nn.Dropout(p=0.1) on the embedded input stays on while translating, so "
        "every evaluateRandomly/evaluateAndShowAttention decoding draws dropout masks and the "
        "greedy translation is randomised; the fix is encoder.eval(); decoder.eval() first",
    ),
    ("reinforcement_q_learning", "train-eval-mode", "return policy_net(state).max(1)[1].view(1, 1)"): (
        "right",
        "select_action() runs policy_net under no_grad in training mode (only target_net is put "
        "in eval()): its three BatchNorm2d layers normalise the one screen by its own statistics "
        "and fold every acting step's single-screen statistics into the running means that "
        "target_net, copied by load_state_dict and in eval mode, computes its targets with; the "
        "actions are not those the net gives in eval mode",
    ),
    ("reinforcement_q_learning", "eval-without-no-grad", "target_net(non_final_next_states).max(1)[0].detach()"): (
        "right",
        "target_net is in eval mode but its parameters still require grad and the call is not "
        "under no_grad: every optimisation step records a graph through the whole target "
        "network (batch of screens) only to .detach() it; the result is correct, the graph and "
        "its activations are wasted (later versions of the tutorial wrap this line in "
        "torch.no_grad())",
    ),
    # Explained from torch's FutureWarning; the finding's place is typing_extensions.py (the frame
    # of torch's @deprecated wrapper, which the watcher counts as the user's), not the line
    # `scaler = torch.cuda.amp.GradScaler(enabled=(dtype == 'float16'))` that made it.
    ("nanogpt", "cuda-amp-gradscaler-deprecated", "scaler = torch.cuda.amp.GradScaler("): (
        "right",
        "train.py builds torch.cuda.amp.GradScaler(enabled=(dtype == 'float16')), the form torch "
        "deprecates for torch.amp.GradScaler('cuda', ...); torch warned so (a FutureWarning). Its "
        "first run placed the finding in typing_extensions.py (torch's @deprecated wrapper): the "
        "watcher now takes the line the warning's own stacklevel names",
    ),
    ("image_captioning", "eval-without-no-grad", "feature = encoder(image_tensor)"): (
        "right",
        "sample.py puts the encoder in eval() but calls it (and decoder.sample) with gradients "
        "on: the backbone is under no_grad inside forward, but encoder.linear and encoder.bn "
        "record a graph that no backward uses; one image, so little is wasted, but the "
        "pitfall is there: the fix is torch.no_grad() around sampling",
    ),
}


# -- one program, in the child interpreter ----------------------------------------------------------
COUNTING_WATCHER = """
class CountingWatcher(Watcher):
    looked = {}

    def guarded(self, detector, method, *args):
        if getattr(method, "__name__", "") not in ("start", "stop", "functions"):
            self.looked[detector.case] = self.looked.get(detector.case, 0) + 1
        return super().guarded(detector, method, *args)
"""


def run_one(program: Path, out: Path, watched: bool) -> None:
    """Run ``program`` as ``python program`` would (cwd: its folder), with the watcher on when
    ``watched``; write what it found, the exit status and the wall time to ``out``."""
    import runpy

    sys.argv = [str(program)]
    sys.path[0] = str(program.parent)
    os.chdir(program.parent)
    watcher = None
    if watched:
        from torch_pitfalls.watch.session import Watcher

        # Counts, per case, how often a detector looked at something (a watched torch call, a module
        # or optimizer hook): silence then means it looked and found nothing. Compiled under a
        # "<...>" file name, which the watcher counts as its own, so that findings keep the user's line.
        namespace = {"Watcher": Watcher}
        exec(compile(COUNTING_WATCHER, "<watch-fp-counting>", "exec"), namespace)
        CountingWatcher = namespace["CountingWatcher"]
        watcher = CountingWatcher(pedantic=True, explain=True)
    status, error = 0, None
    start = time.perf_counter()
    if watcher is not None:
        watcher.start()
    try:
        runpy.run_path(str(program), run_name="__main__")
    except SystemExit as exc:
        status = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException as exc:  # noqa: BLE001 - recorded, the study goes on
        status, error = 1, f"{type(exc).__name__}: {exc}"
        if watcher is not None:
            watcher.explain_exception(exc)
    finally:
        if watcher is not None:
            watcher.stop()
    seconds = time.perf_counter() - start
    result = {
        "status": status,
        "error": error,
        "seconds": round(seconds, 3),
        "findings": [f.to_json() for f in watcher.findings] if watcher else [],
        "watcher_errors": list(watcher.errors) if watcher else [],
        "looked": dict(sorted(watcher.looked.items())) if watcher else {},
    }
    out.write_text(json.dumps(result), encoding="utf-8")


def child(program: Path, watched: bool, tmp: Path) -> dict:
    out = tmp / f"{program.stem}.{'watched' if watched else 'bare'}.json"
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
        OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1"),
    )
    proc = subprocess.run(
        [sys.executable, __file__, "--child", str(program), str(out), "1" if watched else "0"],
        cwd=tmp,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if not out.is_file():
        return {
            "status": proc.returncode,
            "error": (proc.stderr or proc.stdout)[-2000:],
            "seconds": None,
            "findings": [],
            "watcher_errors": [],
            "looked": {},
        }
    return json.loads(out.read_text(encoding="utf-8"))


# -- the study --------------------------------------------------------------------------------------
def source_line(program: Path, line: int) -> str:
    lines = program.read_text(encoding="utf-8").splitlines()
    return lines[line - 1].strip() if 0 < line <= len(lines) else ""


def verdict_for(name: str, case: str, code: str) -> tuple[str, str]:
    for (program, vcase, piece), judged in VERDICTS.items():
        if program == name and vcase == case and piece in code:
            return judged
    return ("unjudged", "no verdict recorded for this firing")


def study(names: list[str]) -> dict:
    import torch

    programs = [PROGRAMS_DIR / f"{n}.py" for n in names]
    rows, totals = [], {"findings": 0, "right": 0, "wrong": 0, "unjudged": 0}
    with tempfile.TemporaryDirectory(prefix="watch-fp-") as tmp_name:
        tmp = Path(tmp_name)
        for program in programs:
            work = tmp / program.stem
            work.mkdir()
            copy = work / program.name
            shutil.copy2(program, copy)
            bare = child(copy, False, work)
            watched = child(copy, True, work)
            shown = f"benchmarks/watch_fp_programs/{program.name}"
            findings = []
            for f in watched["findings"]:
                in_program = os.path.basename(f["path"]) == program.name
                code = source_line(program, f["line"]) if in_program else ""
                verdict, why = verdict_for(program.stem, f["case"], code)
                totals["findings"] += 1
                totals[verdict] += 1
                findings.append(
                    {
                        "case": f["case"],
                        "kind": f["kind"],
                        "pedantic": f["pedantic"],
                        "where": f"{shown}:{f['line']}" if in_program else f"{f['path']}:{f['line']}",
                        "code": code,
                        "count": f["count"],
                        "detail": f["detail"],
                        "verdict": verdict,
                        "why": why,
                    }
                )
            rows.append(
                {
                    "program": program.stem,
                    "source": first_comment_line(program),
                    "steps": STEPS.get(program.stem, ""),
                    "status": {"bare": bare["status"], "watched": watched["status"]},
                    "error": watched["error"] or bare["error"],
                    "seconds": {"bare": bare["seconds"], "watched": watched["seconds"]},
                    "findings": findings,
                    "watcher_errors": watched["watcher_errors"],
                    "looked": watched["looked"],
                }
            )
            print(
                f"{program.stem}: {len(findings)} finding(s), bare {bare['seconds']} s, watched "
                f"{watched['seconds']} s, status {bare['status']}/{watched['status']}",
                file=sys.stderr,
            )
    return {
        "tool": "pitfalls watch --pedantic (every detector, sound and heuristic, and the explainer)",
        "torch": torch.__version__,
        "python": sys.version.split()[0],
        "device": "cpu",
        "programs": rows,
        "totals": totals,
    }


def first_comment_line(program: Path) -> str:
    head = []
    for line in program.read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            break
        head.append(line.lstrip("# ").rstrip())
    text = " ".join(head)
    return text.split(". Edits")[0].split(", trained here")[0][:300]


def table(report: dict) -> str:
    out = []
    for row in report["programs"]:
        if not row["findings"]:
            out.append(f"{row['program']:26s} -                                    (nothing fired)")
        for f in row["findings"]:
            out.append(
                f"{row['program']:26s} {f['case']:34s} {f['where'].split('/')[-1]:28s} x{f['count']:<3d} "
                f"{f['verdict']:8s} {f['why']}"
            )
    t = report["totals"]
    out.append(f"findings {t['findings']}: right {t['right']}, wrong {t['wrong']}, unjudged {t['unjudged']}")
    return "\n".join(out)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child"]:
        run_one(Path(argv[1]), Path(argv[2]), argv[3] == "1")
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="programs to run (default: all of watch_fp_programs/)")
    parser.add_argument("--json", default=str(DEFAULT_JSON), help="where to write the report")
    args = parser.parse_args(argv)
    names = args.names or sorted(p.stem for p in PROGRAMS_DIR.glob("*.py"))
    report = study(names)
    path = Path(args.json)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    tmp.replace(path)
    print(table(report))
    failed = [r["program"] for r in report["programs"] if r["status"]["bare"] != 0 or r["status"]["watched"] != 0]
    if failed:
        print(f"programs that failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if report["totals"]["unjudged"] or failed else 0


if __name__ == "__main__":
    sys.exit(main())
