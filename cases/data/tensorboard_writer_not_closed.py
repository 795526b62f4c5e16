# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # A `SummaryWriter` that was never closed
#
# Your training script logs the loss with `writer.add_scalar(...)` and calls
# `writer.close()` at the very end. One run stops before it gets there: it is killed, runs out
# of memory, loses its node, or crashes in native code. You open TensorBoard on its log
# directory and there is an event file, with nothing in it: the scalars logged just before the
# stop are not there, and for a short run nothing is.

# %%
import tempfile
from pathlib import Path

from torch_pitfalls import observe, run_python

LOGGED = [(0, 1.0), (1, 0.5), (2, 0.25)]  # (step, loss): exact in float32
STOPPED = 100  # exit status base: 100 + the number of add_scalar calls that returned

# A training script in miniature. It reports how many scalars it logged through its exit status:
# printing would hand the writer's thread a chance to run (see "Why"). The switch interval only
# makes the timing of the stop repeatable; a real run is stopped at a random instant.
SCRIPT = """
import os, sys
sys.setswitchinterval(60)
from torch.utils.tensorboard import SummaryWriter
LOGDIR, LOSSES = {logdir!r}, {losses!r}
logged = 0
{body}
os._exit({stopped} + logged)  # the run stops here: no cleanup, no atexit, no thread joined
"""

WITHOUT_CLOSE = """
writer = SummaryWriter(LOGDIR)
for step, loss in LOSSES:
    writer.add_scalar("loss", loss, step)
    logged += 1
"""

WITH_BLOCK = """
with SummaryWriter(LOGDIR) as writer:
    for step, loss in LOSSES:
        writer.add_scalar("loss", loss, step)
        logged += 1
"""


def run_and_read(body):
    """Run the script in its own interpreter, writing into a fresh temp directory; once it has
    stopped, read that directory back with TensorBoard's own reader."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    with tempfile.TemporaryDirectory(prefix="pitfalls-tb-") as logdir:
        code = SCRIPT.format(body=body, logdir=logdir, losses=LOGGED, stopped=STOPPED)
        proc = run_python(code, cwd=logdir, timeout=120)
        if proc.returncode < STOPPED:  # it failed before the stop: not an observation
            raise RuntimeError(f"the script exited with {proc.returncode}: {proc.stderr.strip()[-500:]}")
        event_files = sorted(p.name for p in Path(logdir).glob("events.out.tfevents.*"))
        reader = EventAccumulator(logdir)
        reader.Reload()
        scalars = [(e.step, e.value) for e in reader.Scalars("loss")] if "loss" in reader.Tags()["scalars"] else []
        return {"logged": proc.returncode - STOPPED, "event files": len(event_files), "scalars read": scalars}


# %% [markdown]
# ## The broken code
# Three losses logged, then the run stops before `writer.close()`.


# %%
def broken(device):
    # Nothing here touches the device: the logged values are Python floats.
    return run_and_read(WITHOUT_CLOSE)


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# `add_scalar` does not write to the file. It serialises an event and puts it on an in-memory
# queue, and a background thread (tensorboard's `EventFileWriter`) takes events off that queue
# and appends them to the event file. `flush()` waits until the queue is empty and the file is
# flushed; `close()` does the same, then stops the thread. A full queue (`max_queue`, 10
# events) makes the next `add_*` call wait for the thread, and the thread flushes every
# `flush_secs` (120 s by default), but all of that happens only while the process lives. With
# TensorFlow installed, writes go through `tf.io.gfile`, which buffers them until such a
# flush: up to two minutes of logging can sit in memory.
#
# So when a run stops abruptly (SIGKILL, the out-of-memory killer, a preempted job,
# `os._exit`, a segfault in an extension), whatever the thread had not yet written is gone:
# the thread is a daemon, nothing joins it, and the queue lives in the dead process's memory.
# The event file itself is there, since the writer creates it, with its header, as soon as the
# `SummaryWriter` is built. That is why TensorBoard lists the run and shows no data.
#
# The script above stops right after its last `add_scalar`. It raises Python's thread switch
# interval, so the writer's thread cannot be handed the interpreter between the logging and the
# stop. That removes only the luck of timing: with the default interval the same script lost
# all three events in each of 8 tries here. It reports its count through the exit status because
# printing, a blocking write, would let the writer's thread run first.
#
# ## The fix
# Close the writer whatever happens: `with SummaryWriter(logdir) as writer:` (its `__exit__`
# calls `close()`, also when an exception leaves the block), or `writer.close()` in a
# `finally`. Call `writer.flush()` at points you cannot afford to lose (end of each epoch,
# before a checkpoint). A `SIGKILL` still loses what came after the last flush; a shorter
# `flush_secs` narrows that window.


# %%
def fixed(device):
    return run_and_read(WITH_BLOCK)


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The S1 notes' troubleshooting list has an entry on TensorBoard showing no data. An
# `add_scalar` placed at the end of the code was never reached because the run stopped, and the
# cause was taken to be a writer that was not closed. The same list also records corrupted
# event files when a run logging into a directory was stopped with Ctrl-C while TensorBoard was
# reading it. The same symptom reached huggingface/transformers#779 (2019): some scalars of
# an example script never appeared in TensorBoard because the script left its `SummaryWriter`
# unclosed, and the fix was to close it.
#
# The mechanism was read in tensorboard's writer (`event_file_writer.py`: `_AsyncWriter` puts
# serialised events on a `queue.Queue`; a daemon `_AsyncWriterThread` writes them, flushing every
# `flush_secs`; `flush()` joins the queue; `close()` stops the thread) and in torch's
# `SummaryWriter`, which wraps it and whose documentation describes `flush_secs`, `max_queue`,
# `flush()` and `close()`. Observed with torch 2.13.0 (CPU) and tensorboard 2.21.0 without
# TensorFlow: the unclosed run's event file holds the header and none of the three scalars, the
# closed one holds all three. The TensorFlow-backed buffering was read, not run.

# %% [markdown]
# ## How the harness checks it
#
# A look-alike: the run stopped *before* its first `add_scalar` (the other way to read the
# source's note). The event file exists and TensorBoard shows nothing here too, but nothing
# was lost: nothing was logged, and no `close()` would change that.

# %% tags=["hide-cell"]
from torch_pitfalls import Case
from torch_pitfalls.sources import S1

STOPPED_BEFORE_LOGGING = """
writer = SummaryWriter(LOGDIR)
"""


def symptom(run):
    """The writer made its event file and the script logged scalars, yet the reader finds fewer
    scalars in it than were logged."""
    if run.error is not None or not isinstance(run.value, dict):
        return False
    value = run.value
    return value["event files"] >= 1 and value["logged"] > 0 and len(value["scalars read"]) < value["logged"]


def near_miss(device):
    return run_and_read(STOPPED_BEFORE_LOGGING)


def check(run, device):
    """Every scalar the script logged is in the file: the three (step, loss) pairs written in
    the script, read back by TensorBoard's reader, in order."""
    assert run.value["logged"] == len(LOGGED), run.value
    assert run.value["scalars read"] == LOGGED, run.value["scalars read"]


CASE = Case(
    id="tensorboard-writer-not-closed",
    title="A SummaryWriter that was never closed",
    kind="silent",
    symptom_category="wrong-values",
    symptom_line="A run that crashed leaves an empty TensorBoard event file: nothing was flushed.",
    # Observed on torch 2.13.0 with tensorboard 2.21.0. The mechanism is tensorboard's writer
    # (an in-memory queue drained by a background thread); no release of torch or tensorboard
    # is known to change it, so no bound either way.
    affects="*",
    devices=("cpu",),
    device_independent=True,  # the variants never use their device
    sources=(
        S1.at(
            "troubleshooting list: an add_scalar placed at the end of the code was never "
            "reached, the writer was not closed, and TensorBoard showed no data"
        ),
    ),
    tags=("data", "tensorboard", "logging", "flush"),
    references=(
        "https://docs.pytorch.org/docs/stable/tensorboard.html",  # flush(), close(), flush_secs
        "https://github.com/tensorflow/tensorboard/blob/master/tensorboard/summary/writer/event_file_writer.py",
        "https://github.com/huggingface/transformers/issues/779",  # scalars missing: writer not closed
    ),
    # Each variant starts a fresh Python that imports torch and tensorboard: seconds, more on a
    # loaded machine.
    timeout=150.0,
    # torch.utils.tensorboard too: it can fail to import where tensorboard imports (torch 1.13 needs six)
    requires=("tensorboard", "torch.utils.tensorboard"),
)
