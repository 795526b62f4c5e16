"""What one cell prints, captured in the order it was written: Python's stdout and stderr,
warnings as Python shows them, and what C code writes to file descriptors 1 and 2 (torch's C++
logs), as notebook stream outputs."""

from __future__ import annotations

import contextlib
import ctypes
import io
import os
import tempfile
import warnings

import nbformat


class Streams:
    """stdout and stderr of one cell, kept in the order they were written."""

    def __init__(self):
        self.chunks: list[list[str]] = []

    def writer(self, name: str) -> io.TextIOBase:
        streams = self

        class Writer(io.TextIOBase):
            encoding = "utf-8"

            def writable(self):
                return True

            def write(self, text):
                if streams.chunks and streams.chunks[-1][0] == name:
                    streams.chunks[-1][1] += text
                else:
                    streams.chunks.append([name, text])
                return len(text)

        return Writer()

    def outputs(self) -> list:
        return [nbformat.v4.new_output("stream", name=name, text=text) for name, text in self.chunks if text]


@contextlib.contextmanager
def captured(streams: Streams):
    """stdout, stderr and warnings into ``streams``; warnings shown as Python shows them; what C
    code writes to file descriptors 1 and 2 (torch's C++ logs) after the Python text."""
    with printed_into(streams), warnings.catch_warnings():
        warnings.simplefilter("default")
        yield


@contextlib.contextmanager
def printed_into(streams: Streams):
    """stdout and stderr only (Python's and C's), leaving warnings to whoever records them."""
    with (
        _descriptors_captured(streams),
        contextlib.redirect_stdout(streams.writer("stdout")),
        contextlib.redirect_stderr(streams.writer("stderr")),
    ):
        yield


@contextlib.contextmanager
def _descriptors_captured(streams: Streams):
    libc = ctypes.CDLL(None)
    saved, files = {}, {}
    for fd in (1, 2):
        files[fd] = tempfile.TemporaryFile()
        saved[fd] = os.dup(fd)
        os.dup2(files[fd].fileno(), fd)
    try:
        yield
    finally:
        libc.fflush(None)  # C stdio buffers, before the descriptors go back
        for fd, name in ((1, "stdout"), (2, "stderr")):
            os.dup2(saved[fd], fd)
            os.close(saved[fd])
            files[fd].seek(0)
            text = files[fd].read().decode("utf-8", errors="replace")
            files[fd].close()
            if text:
                streams.writer(name).write(text)
