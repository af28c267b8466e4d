"""Segmentation, colour naming and shape classification on constructed frames with known contents."""

from collections import Counter

import numpy as np
import pytest

from sama_model.backends.lite.shared.query import parse_query
from scenes import RGB, background, draw_shape, textured_image
from sama_model.backends.lite.perception.colours import color_name, palette
from sama_model.backends.lite.perception.segmentation import Segmenter, segment_frame
from sama_model.backends.lite.perception.shapes import classify_shape

SCENE = [
    ("circle", "red", (40, 40), 14),
    ("circle", "red", (120, 60), 10),
    ("square", "blue", (180, 50), 16),
    ("triangle", "green", (60, 160), 18),
    ("star", "yellow", (150, 160), 22),
    ("rectangle", "purple", (100, 110), 16),
    ("circle", "white", (30, 200), 30),
]


def _scene(bg: str) -> np.ndarray:
    img = background(224, 224, bg, seed=1)
    for shape, colour, centre, size in SCENE:
        draw_shape(img, shape, colour, centre, size)
    return img


@pytest.mark.parametrize("bg", ["plain", "gradient", "noise"])
def test_counts_colours_and_shapes_exact(bg):
    found = segment_frame(_scene(bg))
    assert Counter((s.color, s.shape) for s in found) == Counter(
        {
            ("red", "circle"): 2,
            ("blue", "square"): 1,
            ("green", "triangle"): 1,
            ("yellow", "star"): 1,
            ("purple", "rectangle"): 1,
            ("white", "circle"): 1,
        }
    )
    red = sorted((s for s in found if s.color == "red"), key=lambda s: s.centroid[0])
    assert np.allclose(red[0].centroid, (40, 40), atol=1.0) and np.allclose(red[1].centroid, (120, 60), atol=1.0)
    # area of the r=14 circle is pi*14^2 = 616 px, give or take its anti-aliased rim
    assert 560 < red[0].area < 700


def test_large_object_partly_outside_frame_is_whole():
    """The white r=30 circle is clipped by the frame corner; the second background pass recovers it."""
    white = [s for s in segment_frame(_scene("plain")) if s.color == "white"]
    assert len(white) == 1 and white[0].area > 2500  # visible part of pi*30^2 = 2827


def test_texture_patches_are_not_objects():
    img = textured_image(224, 224, seed=3)
    for shape, colour, centre, size in SCENE[:5]:
        draw_shape(img, shape, colour, centre, size)
    found = segment_frame(img)
    assert Counter((s.color, s.shape) for s in found) == Counter(
        {("red", "circle"): 2, ("blue", "square"): 1, ("green", "triangle"): 1, ("yellow", "star"): 1}
    )


def test_boxes_are_in_decoded_frame_pixels_when_working_smaller():
    img = np.zeros((448, 448, 3), np.uint8) + 90
    draw_shape(img, "square", "red", (300, 100), 40)
    (seg,) = Segmenter(work_side=224).segment(img)
    half = 40 / np.sqrt(2)
    assert np.allclose(seg.box, (300 - half, 100 - half, 300 + half, 100 + half), atol=4)  # 2 working pixels


@pytest.mark.parametrize("shape", ["circle", "square", "triangle", "star", "rectangle", "hexagon"])
@pytest.mark.parametrize("angle", [0.0, 17.0])
def test_shape_names_rotation_invariant(shape, angle):
    import cv2

    img = np.zeros((120, 120), np.uint8)
    from scenes import shape_points

    cv2.fillPoly(img, [np.round(shape_points(shape, (60, 60), 25, angle) * 16).astype(np.int32)], 1, shift=4)
    cnt = max(cv2.findContours(img, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)[0], key=cv2.contourArea)
    assert classify_shape(cnt)[0] == shape


@pytest.mark.parametrize("name", sorted(RGB))
def test_palette_colours_named(name):
    assert color_name(RGB[name]) == name


def test_frame_palette_shares():
    img = np.zeros((100, 100, 3), np.uint8)
    img[:, :75] = RGB["blue"]
    img[:, 75:] = RGB["yellow"]
    assert palette(img) == [("blue", 0.75), ("yellow", 0.25)]


def test_query_parsing():
    q = parse_query("How many red circles and blue boxes are there?")
    assert q.colors == ("red", "blue") and q.shapes == ("circle", "square") and "count" in q.kinds
    assert q.matches("red", "circle") and not q.matches("green", "circle")
    assert parse_query("is the camera panning left?").kinds >= {"camera"}
    assert parse_query("three stars").numbers == (3,)


def test_rings_and_crosses():
    img = background(224, 224, "noise", seed=2)
    for centre, shape, colour in (
        ((50, 50), "ring", "blue"),
        ((160, 60), "cross", "orange"),
        ((60, 160), "circle", "blue"),
        ((170, 170), "star", "pink"),
    ):
        draw_shape(img, shape, colour, centre, 22, angle=10)
    found = {(s.color, s.shape) for s in segment_frame(img)}
    assert found == {("blue", "ring"), ("orange", "cross"), ("blue", "circle"), ("pink", "star")}


def _textured_sprite(img: np.ndarray, centre: tuple[int, int], r: int, colour, kind: str, angle: float) -> None:
    """A small sprite whose fill is striped/checkered in its colour and a darker shade of it."""
    h, w = img.shape[:2]
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    inside = (xx - centre[0]) ** 2 + (yy - centre[1]) ** 2 <= r * r
    u = xx * np.cos(angle) + yy * np.sin(angle)
    alt = ((u // 3) % 2 == 0) if kind == "stripes" else (((xx // 3) + (yy // 3)) % 2 == 0)
    dark = (np.asarray(colour, np.float32) * 0.55).astype(np.uint8)
    img[inside & alt] = colour
    img[inside & ~alt] = dark


def _backdrop(kind: str, h: int = 144, w: int = 192) -> np.ndarray:
    """Wide soft stripes or floor tiles in muted colours: flat regions that are not objects."""
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    c0, c1 = np.array([120, 150, 110], np.float32), np.array([170, 140, 160], np.float32)
    if kind == "stripes":
        t = 0.5 + 0.5 * np.sin((xx * 0.8 + yy * 0.6) / 8.0)
    else:
        t = (((xx // 24) + (yy // 24)) % 2).astype(np.float32)
    img = c0 * (1 - t[..., None]) + c1 * t[..., None]
    return np.clip(img + np.random.default_rng(0).normal(0, 3, img.shape), 0, 255).astype(np.uint8)


@pytest.mark.parametrize("kind", ["stripes", "tiles"])
def test_small_textured_sprites_on_a_patterned_backdrop(kind):
    """Regression: the flat-object segmenter missed textured sprites and counted backdrop bands
    and tiles as objects; the colour-rarity pass counts exactly the sprites."""
    img = _backdrop(kind)
    spots = [(30, 30), (90, 40), (150, 30), (40, 100), (110, 105), (165, 95)]
    cols = [RGB["red"], RGB["blue"], RGB["yellow"], RGB["pink"], RGB["orange"], RGB["purple"]]
    for k, (c, col) in enumerate(zip(spots, cols)):
        _textured_sprite(img, c, 9, col, "stripes" if k % 2 else "checker", 0.4 * k)
    found = segment_frame(img)
    assert len(found) == len(spots)
    for c in spots:
        assert any(np.hypot(s.centroid[0] - c[0], s.centroid[1] - c[1]) < 3 for s in found)
    assert all(s.shape in ("circle", "hexagon") for s in found)
    assert len(Segmenter(method="flat").segment(img)) != len(spots)  # what the old method got wrong


def test_colour_rarity_separates_objects_from_a_repeating_backdrop():
    from sama_model.backends.lite.perception.colour_rarity import colour_rarity

    img = _backdrop("tiles")
    _textured_sprite(img, (96, 72), 9, RGB["green"], "stripes", 0.0)
    share = colour_rarity(Segmenter._lab(img))
    assert share[72, 96] < 0.05 and np.median(share) > 0.2


def test_cross_and_ring_query_words():
    assert parse_query("Count the crosses").shapes == ("cross",)
    assert parse_query("how many rings are there").shapes == ("ring",)


def test_fast_median_is_numpys_median_bit_for_bit():
    """The segmenter's median (issue 19's hot spot: dozens of calls per frame) returns numpy's values
    and dtypes: the middle element, or the mean of the two middle ones (float64 for integers)."""
    from sama_model.backends.lite.shared.order_stats import fast_median

    u8 = np.array([[1, 5], [3, 2], [2, 9], [7, 4]], np.uint8)
    got = fast_median(u8)
    assert got.dtype == np.float64 and got.tolist() == [2.5, 4.5]
    f32 = np.array([[0.1, -3.0, 7.0], [0.3, 1.0, 2.0], [0.2, 5.0, -1.0]], np.float32)
    assert fast_median(f32).dtype == np.float32 and fast_median(f32).tolist() == f32[[2, 1, 1], [0, 1, 2]].tolist()
    assert fast_median(np.array([4.0, 1.0], np.float32)) == np.float32(2.5)
    rng = np.random.default_rng(0)
    for n in (1, 2, 7, 64, 301):
        for a in (rng.normal(0, 30, (n, 3)).astype(np.float32), rng.integers(0, 256, (n,)).astype(np.uint8)):
            ref, got = np.median(a, axis=0), fast_median(a)
            assert np.asarray(got).dtype == np.asarray(ref).dtype and np.array_equal(got, ref)


def _rarity_reference(lab, clusters=16, inner=31, outer=91, sigma=9.0, sample=3000):
    """colour_rarity as first written (per-cluster broadcasting, argmin, float boxes): the pin for
    the vectorised version, which must give the same array bit for bit."""
    import cv2

    h, w = lab.shape[:2]
    x = lab.reshape(-1, 3)
    step = max(1, len(x) // sample)
    sub = np.ascontiguousarray(x[step // 2 :: step][:sample])
    k = int(min(clusters, len(sub)))
    cv2.setRNGSeed(12345)
    _, _, centres = cv2.kmeans(sub, k, None, (cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_MAX_ITER, 8, 0.5), 1,
                               cv2.KMEANS_PP_CENTERS)
    d2 = np.empty((k, len(x)), np.float32)
    for j in range(k):
        diff = x - centres[j]
        d2[j] = np.einsum("ij,ij->i", diff, diff)
    lbl = np.argmin(d2, axis=0)
    weight = np.exp(d2 * np.float32(-0.5 / sigma**2))
    ring, glob = np.zeros((h, w), np.float32), np.zeros(len(x), np.float32)
    inner, outer = min(inner, h, w) | 1, min(outer, 2 * max(h, w) + 1) | 1
    norm = float(outer * outer - inner * inner)
    for j in range(k):
        ind = (lbl == j).reshape(h, w).astype(np.float32)
        frac = float(ind.mean())
        if frac == 0.0:
            continue
        big = cv2.boxFilter(ind, -1, (outer, outer), normalize=False, borderType=cv2.BORDER_REFLECT)
        small = cv2.boxFilter(ind, -1, (inner, inner), normalize=False, borderType=cv2.BORDER_REFLECT)
        ring += weight[j].reshape(h, w) * (big - small) / norm
        glob += weight[j] * frac
    return np.minimum(ring, glob.reshape(h, w))


@pytest.mark.parametrize("kind", ["stripes", "tiles"])
def test_colour_rarity_is_the_reference_bit_for_bit(kind):
    from sama_model.backends.lite.perception.colour_rarity import colour_rarity

    img = _backdrop(kind, 168, 224)
    for k, c in enumerate([(30, 30), (120, 60), (190, 130)]):
        _textured_sprite(img, c, 10, RGB[("red", "blue", "yellow")[k]], "stripes", 0.5 * k)
    lab = Segmenter._lab(img)
    assert np.array_equal(colour_rarity(lab), _rarity_reference(lab))


def test_flat_candidates_dropped_by_the_rarity_test_are_never_named(monkeypatch):
    """The tiles of a floor are 35 flat candidates, all dropped (their colour recurs): naming
    (colour vote, shape fit) runs only for the 6 sprites found, not for 41 objects."""
    from sama_model.backends.lite.perception import segmentation

    img = _backdrop("tiles")
    spots = [(30, 30), (90, 40), (150, 30), (40, 100), (110, 105), (165, 95)]
    cols = [RGB["red"], RGB["blue"], RGB["yellow"], RGB["pink"], RGB["orange"], RGB["purple"]]
    for k, (c, col) in enumerate(zip(spots, cols)):
        _textured_sprite(img, c, 9, col, "stripes" if k % 2 else "checker", 0.4 * k)
    seg = Segmenter()
    assert len(seg._flat_candidates(img)) == 35
    calls = []
    real = segmentation.dominant_colors
    monkeypatch.setattr(segmentation, "dominant_colors", lambda sets: calls.extend(len(p) for p in sets) or real(sets))
    assert len(seg.segment(img)) == 6
    assert len(calls) == 6


def test_flat_patches_of_recurring_colour_neither_are_objects_nor_mask_the_background(monkeypatch):
    """A floor's tiles are flat and large, but their colour recurs: with the rarity map the flat pass keeps
    none of them, so none is masked out of the background and no second pass runs for them (without the
    map: two passes, 40 patches then 31 kept). A large flat red disc is rare: it is the one flat object,
    and its size alone starts the second pass."""
    from sama_model.backends.lite.perception import segmentation
    from sama_model.backends.lite.shared.sampling import resize_max

    img = _backdrop("tiles")
    for k, c in enumerate([(30, 30), (150, 30), (40, 100), (165, 95)]):
        _textured_sprite(img, c, 9, RGB["blue"], "checker", 0.4 * k)
    seg = Segmenter()
    passes = []
    real = segmentation.Segmenter._extract

    def spy(self, *args, **kwargs):
        found, union = real(self, *args, **kwargs)
        passes.append((len(found), int(union.sum())))
        return found, union

    monkeypatch.setattr(segmentation.Segmenter, "_extract", spy)
    small, scale = resize_max(img, seg.work_side)
    share = seg._rare(small, scale)[1]
    assert len(seg._flat_candidates(img)) == 27
    assert [n for n, _ in passes] == [40, 31]
    passes.clear()
    assert seg._flat_candidates(img, (small, scale), share) == []
    assert passes == [(0, 0)]
    disc = draw_shape(img, "circle", "red", (100, 75), 14)
    small, scale = resize_max(disc, seg.work_side)
    share = seg._rare(small, scale)[1]
    passes.clear()
    found = seg._flat_candidates(disc, (small, scale), share)
    assert [(c.named().color, c.named().shape) for c in found] == [("red", "circle")]
    assert passes == [(1, 657), (1, 658)]
    assert sorted(s.color for s in seg.segment(disc)) == ["blue"] * 4 + ["red"]


def test_lab_table_is_the_channel_scaling_for_every_8_bit_code():
    """Segmenter._lab maps OpenCV's 8-bit Lab codes through a table: for each of the 256 codes of
    every channel the table holds the float32 value the array scaling gave (L x 100/255, a/b - 128)."""
    import cv2

    from sama_model.backends.lite.perception.lab_pixels import LAB_TABLE

    codes = np.repeat(np.arange(256, dtype=np.uint8)[None, :, None], 3, axis=2)
    scaled = codes.astype(np.float32)
    scaled[..., 0] *= 100.0 / 255.0
    scaled[..., 1:] -= 128.0
    assert np.array_equal(cv2.LUT(codes, LAB_TABLE), scaled)
    assert LAB_TABLE[0, 255].tolist() == [100.0, 127.0, 127.0] and LAB_TABLE[0, 0].tolist() == [0.0, -128.0, -128.0]
    img = _backdrop("stripes")
    lab = cv2.cvtColor(img, cv2.COLOR_RGB2LAB).astype(np.float32)
    lab[..., 0] *= 100.0 / 255.0
    lab[..., 1:] -= 128.0
    assert np.array_equal(Segmenter._lab(img), lab)


@pytest.mark.parametrize("size, inner, outer", [((168, 224), 31, 91), ((46, 300), 31, 91), ((91, 92), 3, 181),
                                                ((30, 40), 31, 91), ((120, 64), 1, 5)])
def test_annulus_counts_are_the_box_filters(size, inner, outer):
    """colour_rarity's per-cluster annulus counts from one integral image of the reflected labels are
    the two BORDER_REFLECT box filters' difference bit for bit (labels in blocks, stripes and noise,
    a label absent, borders within reach of both boxes; a frame smaller than the outer box's reach
    takes the box filters themselves)."""
    import cv2

    from sama_model.backends.lite.perception.colour_rarity import _AnnulusCounts

    h, w = size
    rng = np.random.default_rng(h * w)
    labels = rng.integers(0, 5, (h, w)).astype(np.uint8)
    labels[: h // 2, : w // 3] = 5
    labels[:, ::7] = 6
    labels[h // 3 :, w // 2 :] = 7
    counts = _AnnulusCounts(labels, inner, outer)
    assert counts.fast == (outer // 2 < min(h, w))
    for j in range(9):
        mask = (labels == j).astype(np.uint8)
        box = cv2.boxFilter(mask, cv2.CV_32F, (outer, outer), normalize=False, borderType=cv2.BORDER_REFLECT)
        box -= cv2.boxFilter(mask, cv2.CV_32F, (inner, inner), normalize=False, borderType=cv2.BORDER_REFLECT)
        got = counts(j)
        assert got.shape == (h, w) and np.array_equal(got.astype(np.float32), box)


def test_dominant_colors_of_many_sets_are_each_sets_dominant_color():
    """One colour vote over concatenated pixel sets (segmenter's batch per frame) gives each set's
    dominant_color exactly: stripes where a chromatic quarter wins, greys, ties, single pixels, and
    sets that are not (N, 3) uint8 (float, empty-free but 3-D) taking the per-set path."""
    from sama_model.backends.lite.perception.colours import dominant_color, dominant_colors

    rng = np.random.default_rng(11)
    sets = [rng.integers(0, 256, (n, 3)).astype(np.uint8) for n in (1, 2, 3, 7, 40, 191, 1200)]
    stripes = np.zeros((100, 3), np.uint8)
    stripes[:25] = RGB["red"]  # a chromatic quarter beats the black cells
    sets += [stripes, stripes[:99], np.full((10, 3), 128, np.uint8), np.repeat(np.array([RGB["blue"], RGB["green"]], np.uint8), 5, 0)]
    sets += [np.full((6, 3), v, np.uint8) for v in (0, 255, 60)]
    want = [dominant_color(p) for p in sets]
    assert dominant_colors(sets) == want
    assert dominant_colors(sets[::-1]) == want[::-1]
    assert dominant_colors(sets[:1]) == want[:1] and dominant_colors([]) == []
    odd = [sets[5].astype(np.float32), sets[4].reshape(8, 5, 3), sets[3]]
    assert dominant_colors(odd) == [dominant_color(p) for p in odd]
