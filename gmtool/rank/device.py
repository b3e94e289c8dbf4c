"""Which device each command embeds on, and why: the policy that `doctor` shows.

Measured on one H100 with 16 CPU cores (issue #23, code 0204e96): a question embeds in 1.8 ms on
the CPU and 2.5 ms on CUDA, but opening the CUDA session costs 1.0-1.5 s, so a whole-process `ask`
took 1.61-1.78 s with `--device auto` against 0.71-0.75 s on the CPU. A scan's embedding phase
gains instead (12 books: 13.6 s on CUDA against 22.7 s on the CPU). Hence:

- a question (`ask`): the CPU unless `--device cuda`;
- `scan` / `index`: the GPU when one is usable;
- `serve`: answers on the CPU at once and opens a GPU session in the background, then uses it;
- `search`: never embeds.

A question must also be embedded by the graph that made the index's vectors (see
gmtool.index.embedding), which can keep it on the CPU where the index says so.
"""

from __future__ import annotations

from dataclasses import dataclass

DEVICES = ("auto", "cpu", "cuda")
QUESTION_ON_CPU = ("a question embeds in about 2 ms on the CPU, while a CUDA session takes about "
                   "a second to open; --device cuda to use the GPU anyway")


@dataclass(frozen=True, slots=True)
class Choice:
    """A device and the reason for it, in words for `doctor`."""

    device: str
    reason: str


def for_question(requested: str) -> Choice:
    """One question from a one-shot command."""
    if requested == "cuda":
        return Choice("cuda", "--device cuda")
    if requested == "cpu":
        return Choice("cpu", "--device cpu")
    return Choice("cpu", QUESTION_ON_CPU)


def for_scan(requested: str, cuda_usable: bool, cuda_reason: str) -> Choice:
    """A scan's embedding phase: thousands of texts, where the GPU pays for its start-up."""
    if requested == "cpu":
        return Choice("cpu", "--device cpu")
    if cuda_usable:
        return Choice("cuda", "--device cuda" if requested == "cuda" else "a GPU is usable: " + cuda_reason)
    return Choice("cpu", f"no usable GPU: {cuda_reason}")


def for_server(cuda_usable: bool, cuda_reason: str) -> Choice:
    if cuda_usable:
        return Choice("cpu, then cuda", "questions run on the CPU until a GPU session, opened in the "
                      "background, is ready")
    return Choice("cpu", f"no usable GPU: {cuda_reason}")


def plan(requested: str, cuda_usable: bool, cuda_reason: str) -> dict[str, str]:
    """Per command, the device it would use and why (for `doctor`)."""
    out = {
        "ask": for_question(requested),
        "search": Choice("none", "keyword search embeds nothing"),
        "scan/index": for_scan(requested, cuda_usable, cuda_reason),
        "serve": for_server(cuda_usable, cuda_reason),
    }
    return {cmd: f"{c.device} ({c.reason})" for cmd, c in out.items()}
