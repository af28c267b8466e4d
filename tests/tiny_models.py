"""Builders for tiny randomly initialised models, shared by the tests (and the lead's harness test).

No weights can be downloaded here or in CI, so tests build models of the real architectures with
tiny dimensions and random weights into a temporary folder. They test plumbing (loading, chat
templates, shapes, time windows), never accuracy.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

__all__ = ["QWEN_CHAT_TEMPLATE", "QWEN_SPECIAL_TOKENS", "train_byte_bpe", "build_tiny_qwen2_5_vl", "build_tiny_qwen3_vl",
           "make_test_video", "register_tiny_open_clip", "TINY_CLIP_NAME", "build_tiny_yolo",
           "build_tiny_grounding_dino", "build_tiny_open_clip", "build_tiny_sentence_transformer"]

# The vision-language builders live in the package (``mvx-bench routes`` builds them too); the tests
# import them from here as before.
from mvx_tasks.baselines.tiny_models import (  # noqa: E402,F401
    _CORPUS,
    QWEN_CHAT_TEMPLATE,
    QWEN_SPECIAL_TOKENS,
    build_tiny_qwen2_5_vl,
    build_tiny_qwen3_vl,
    train_byte_bpe,
)


def make_test_video(path: str | Path, *, n_frames: int = 24, fps: int = 8, size: tuple[int, int] = (96, 64)) -> Path:
    """Write a short MPEG-4 video (a moving red square on a changing background) with PyAV."""
    import av

    path = Path(path)
    w, h = size
    with av.open(str(path), "w") as container:
        stream = container.add_stream("mpeg4", rate=fps)
        stream.width, stream.height, stream.pix_fmt = w, h, "yuv420p"
        for i in range(n_frames):
            img = np.full((h, w, 3), (20 + 8 * i) % 255, dtype=np.uint8)
            img[:, :, 2] = 60 if i < n_frames // 2 else 200  # a scene change half-way
            x = 4 + (i * 3) % (w - 24)
            img[20:40, x:x + 20] = (220, 30, 30)
            frame = av.VideoFrame.from_ndarray(img, format="rgb24")
            for packet in stream.encode(frame):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    return path


TINY_CLIP_NAME = "mvx-tiny-clip"


def register_tiny_open_clip() -> str:
    """Register a tiny ViT/text-transformer CLIP config with open_clip under :data:`TINY_CLIP_NAME`."""
    from open_clip.factory import _MODEL_CONFIGS

    _MODEL_CONFIGS[TINY_CLIP_NAME] = {
        "embed_dim": 32,
        "vision_cfg": {"image_size": 32, "layers": 1, "width": 32, "patch_size": 16, "head_width": 16},
        "text_cfg": {"context_length": 77, "vocab_size": 49408, "width": 32, "heads": 2, "layers": 1},
    }
    return TINY_CLIP_NAME


def build_tiny_yolo(folder: str | Path, *, cfg: str = "yolov8n.yaml", bias: float = 8.0) -> Path:
    """Save a random-weight YOLOv8 (from ``cfg``) whose class-score biases are raised so it detects things.

    Random weights detect nothing; raising the classification biases of the Detect head makes every
    anchor score high, so NMS keeps a few boxes and the tracker has something to associate (tests only).
    """
    import torch

    from sama_model.backends.models.yolo_tracker import prepare_ultralytics_env

    prepare_ultralytics_env()  # YOLO_OFFLINE / YOLO_CONFIG_DIR before the first ultralytics import
    from ultralytics import YOLO

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    from ultralytics.utils import ROOT, YAML

    yolo = YOLO(cfg)
    yolo.model.names = YAML.load(ROOT / "cfg" / "datasets" / "coco.yaml")["names"]  # a .yaml model has "0".."79"
    head = yolo.model.model[-1]
    with torch.no_grad():
        for seq in head.cv3:
            seq[-1].bias.fill_(-bias)
            seq[-1].bias[0] = bias  # class 0 ("person") fires everywhere
    out = folder / "tiny-yolov8n.pt"
    yolo.save(str(out))
    return out


def build_tiny_grounding_dino(folder: str | Path, *, seed: int = 0) -> Path:
    """Save a tiny random GroundingDINO (small dims, tiny BERT text backbone, tiny Swin) with its processor."""
    import torch
    from transformers import (BertConfig, BertTokenizerFast, GroundingDinoConfig,
                              GroundingDinoForObjectDetection, GroundingDinoImageProcessor,
                              GroundingDinoProcessor, SwinConfig)

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ".", "a", "the", "person", "car", "dog", "cat",
             "ball", "box", "red", "blue", "object", "square", "table", "chair", "bird", "horse", "bag"]
    tokenizer = BertTokenizerFast(vocab={w: i for i, w in enumerate(words)})
    backbone = SwinConfig(embed_dim=16, depths=[1, 1, 1, 1], num_heads=[1, 1, 1, 1], window_size=4,
                          image_size=64, out_features=["stage2", "stage3", "stage4"])
    text = BertConfig(vocab_size=len(words), hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                      intermediate_size=64, max_position_embeddings=64)
    config = GroundingDinoConfig(backbone_config=backbone, text_config=text, d_model=32, encoder_layers=1,
                                 decoder_layers=2, encoder_ffn_dim=64, decoder_ffn_dim=64,
                                 encoder_attention_heads=2, decoder_attention_heads=2, num_queries=20,
                                 num_feature_levels=3, encoder_n_points=2, decoder_n_points=2,
                                 max_text_len=32, use_timm_backbone=False, use_pretrained_backbone=False)
    torch.manual_seed(seed)
    model = GroundingDinoForObjectDetection(config).eval()
    model.save_pretrained(folder)
    image_processor = GroundingDinoImageProcessor(size={"shortest_edge": 64, "longest_edge": 96})
    GroundingDinoProcessor(image_processor=image_processor, tokenizer=tokenizer).save_pretrained(folder)
    return folder


def build_tiny_open_clip(folder: str | Path, *, seed: int = 0) -> Path:
    """Save a tiny random CLIP as an open_clip folder: ``open_clip_config.json`` (``model_cfg`` +
    ``preprocess_cfg``) and ``open_clip_model.safetensors``, the layout of open_clip's hub repos, so the
    CLIP backends load it with ``model=<folder>``."""
    import json

    import open_clip
    import torch
    from safetensors.torch import save_file

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    name = register_tiny_open_clip()
    torch.manual_seed(seed)
    model = open_clip.create_model(name, pretrained=None)
    cfg = {"model_cfg": open_clip.get_model_config(name),
           "preprocess_cfg": {"mean": list(open_clip.OPENAI_DATASET_MEAN), "std": list(open_clip.OPENAI_DATASET_STD)}}
    (folder / "open_clip_config.json").write_text(json.dumps(cfg, indent=2))
    save_file({k: v.contiguous() for k, v in model.state_dict().items()}, str(folder / "open_clip_model.safetensors"))
    return folder


def build_tiny_sentence_transformer(folder: str | Path, *, seed: int = 0) -> Path:
    """Save a tiny random BERT sentence-transformer (mean pooling, 32-d) with a small WordPiece vocabulary."""
    import torch
    from sentence_transformers import SentenceTransformer, models
    from transformers import BertConfig, BertModel, BertTokenizerFast

    folder = Path(folder)
    raw = folder.with_name(folder.name + "-hf")
    raw.mkdir(parents=True, exist_ok=True)
    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + sorted({w.strip(".,?!:;").lower() for line in _CORPUS
                                                                      for w in line.split()} - {""})
    tokenizer = BertTokenizerFast(vocab={w: i for i, w in enumerate(words)})
    torch.manual_seed(seed)
    BertModel(BertConfig(vocab_size=len(words), hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                         intermediate_size=64, max_position_embeddings=128)).save_pretrained(raw)
    tokenizer.save_pretrained(raw)
    word = models.Transformer(str(raw), max_seq_length=64)
    SentenceTransformer(modules=[word, models.Pooling(getattr(word, "get_embedding_dimension", word.get_word_embedding_dimension)(), "mean")],
                        device="cpu").save(str(folder))
    return folder
