"""One identity descriptor row: the subject's colour layout, its texture view, the camera's motion and the path
that read the row (:class:`ReadPath`); helpers that read the path and the stack row back."""

from __future__ import annotations

from enum import IntEnum

import numpy as np

from .stack import STACK_DIM

VIEW_W, VIEW_H = 32, 56  # the upright subject's box, resampled (a standing figure is ~1:1.8)
LAYOUT_W, LAYOUT_H = 8, 14
IDENTITY_DIM = LAYOUT_W * LAYOUT_H * 4  # relative L, a, b and coverage per cell
TEXTURE_DIM = VIEW_W * VIEW_H * 4


class ReadPath(IntEnum):
    """How a descriptor row was read; stored as the row's last value.

    Why in the row: the ``visual_similarity`` tool caches each video's embedding per aspect and hands the two
    arrays of a pair to the backend's ``pair_aspects`` and ``compare_embeddings``, so what a read was must travel
    inside its array. The code is written only by :func:`path_row`, :func:`with_stack` and
    :func:`.descriptor.identity_descriptor`, and read only by :func:`read_path` and :func:`has_path`."""

    #: the temporal-median locator and the unblurred cut (a still camera)
    STILL = 0
    #: the flow locator and the blurred cut (a moving camera, and a still one paired with a clearly moving one,
    #: :func:`.compare.moving_rereads`)
    MOVING = 1
    #: the subject's view read once from its aligned stack (:mod:`.stack`), one row after the clip's own rows:
    #: :data:`.stack.STACK_DIM` values, zeros, the camera's motion and this path
    STACK = 2
    #: a moving camera's clip whose per-frame cuts are not read yet (:func:`.descriptor.identity_descriptor` with
    #: ``cuts=False``): one row of zeros but the camera's motion. Why: where both clips carry stack views and the
    #: pair is not near its camera gate, the score is the stack views' and the twelve cuts go unused (0.38 s CPU of
    #: a 0.75-s identity read of a 3-s 224-px clip over real footage); :func:`.compare.cut_reads` says when a pair
    #: needs them
    DEFERRED = 3
    #: a deferred read whose cuts, once read, found no subject (:func:`.descriptor.cut_descriptor`): the pair is
    #: undecided, as when any read finds none
    EMPTY_CUT = 4


#: one descriptor row: the colour layout, the texture view, the camera's motion (input px per frame) and
#: the path that read it
ROW_DIM = IDENTITY_DIM + TEXTURE_DIM + 2


def path_row(camera: float, path: ReadPath) -> np.ndarray:
    """[1, ROW_DIM]: a read that holds no cut, only the camera's motion and its path (:attr:`ReadPath.DEFERRED`,
    :attr:`ReadPath.EMPTY_CUT`)."""
    row = np.zeros((1, ROW_DIM), np.float32)
    row[0, -2:] = (camera, float(path))
    return row


def camera_motion(rows: np.ndarray) -> float | None:
    """The camera's motion a descriptor was read under (input px per frame); None for layout-only rows."""
    r = np.asarray(rows)
    return float(r[0, -2]) if r.ndim == 2 and r.shape[1] == ROW_DIM else None


def read_path(rows: np.ndarray) -> ReadPath | None:
    """The path that read a descriptor's rows; None for layout-only rows."""
    r = np.asarray(rows)
    return ReadPath(int(r[0, -1])) if r.ndim == 2 and r.shape[1] == ROW_DIM else None


def has_path(rows: np.ndarray | None, path: ReadPath) -> bool:
    """Whether any of a descriptor's rows was read by ``path`` (:attr:`ReadPath.STACK`: its stack was read, whether or not
    it found a view; :attr:`ReadPath.DEFERRED`: its cuts are deferred; :attr:`ReadPath.EMPTY_CUT`: they found no subject)."""
    r = None if rows is None else np.asarray(rows)
    return r is not None and r.ndim == 2 and r.shape[1] == ROW_DIM and bool((r[:, -1] == float(path)).any())


def with_stack(rows: np.ndarray | None, view: np.ndarray | None) -> np.ndarray | None:
    """A descriptor's rows with the clip's stack view (:func:`.stack.stack_view`) appended as a
    :attr:`ReadPath.STACK` row; a view of zeros when the stack found none, so the rows say that the stack was read
    (:func:`has_path`). None, or rows of another layout, as they are."""
    if rows is None or np.asarray(rows).shape[1] != ROW_DIM:
        return rows
    row = np.zeros(ROW_DIM, np.float32)
    if view is not None:
        row[:STACK_DIM] = view
    row[-2:] = (camera_motion(rows), float(ReadPath.STACK))
    return np.concatenate([rows, row[None]]).astype(np.float32)


def split_stack(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """(the rows without the stack row, the stack view or None: none read, or read and none found)."""
    r = np.asarray(rows)
    if r.ndim != 2 or r.shape[1] != ROW_DIM:
        return r, None
    stack = r[:, -1] == float(ReadPath.STACK)
    view = r[stack][0, :STACK_DIM] if stack.any() else None
    return r[~stack], (view if view is not None and view.any() else None)
