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

# Qwen2-VL / Qwen2.5-VL chat template (the upstream one, trimmed of tool calls): video items render
# as <|vision_start|><|video_pad|><|vision_end|> and images as <|vision_start|><|image_pad|><|vision_end|>.
QWEN_CHAT_TEMPLATE = (
    "{% set image_count = namespace(value=0) %}{% set video_count = namespace(value=0) %}"
    "{% for message in messages %}"
    "{% if loop.first and message['role'] != 'system' %}<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n{% endif %}"
    "<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}<|im_end|>\n"
    "{% else %}{% for content in message['content'] %}"
    "{% if content['type'] == 'image' or 'image' in content or 'image_url' in content %}"
    "{% set image_count.value = image_count.value + 1 %}"
    "{% if add_vision_id %}Picture {{ image_count.value }}: {% endif %}<|vision_start|><|image_pad|><|vision_end|>"
    "{% elif content['type'] == 'video' or 'video' in content %}"
    "{% set video_count.value = video_count.value + 1 %}"
    "{% if add_vision_id %}Video {{ video_count.value }}: {% endif %}<|vision_start|><|video_pad|><|vision_end|>"
    "{% elif 'text' in content %}{{ content['text'] }}{% endif %}"
    "{% endfor %}<|im_end|>\n{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
QWEN_SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|vision_end|>",
                       "<|vision_pad|>", "<|image_pad|>", "<|video_pad|>"]

_CORPUS = [
    "What happens in the video? Describe the objects, colours and the motion you see.",
    "The red ball moves left of the blue box. A person walks a dog in the park.",
    "Answer with the option's letter from the given choices directly. A. B. C. D.",
    "Which video shows the same person? Count the cars. The cat jumps on the table.",
    "system user assistant You are a helpful assistant. 0 1 2 3 4 5 6 7 8 9 seconds",
]


def train_byte_bpe(special_tokens: list[str], vocab_size: int = 400):
    """A byte-level BPE tokenizer trained on the spot (the `tokenizers` library), as a fast tokenizer."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=special_tokens,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(_CORPUS * 4, trainer=trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tok)


def build_tiny_qwen2_5_vl(folder: str | Path, *, seed: int = 0) -> Path:
    """Save a tiny random Qwen2.5-VL (2 text layers, hidden 64, 2-block vision tower) to ``folder``.

    The folder loads with ``AutoModelForImageTextToText`` / ``Qwen2_5_VLForConditionalGeneration``
    and ``AutoProcessor``, and with lmms-eval's built-in ``qwen2_5_vl`` adapter (``pretrained=<folder>,
    attn_implementation=sdpa,device=cpu,device_map=cpu``). Its processor carries a Qwen chat template
    and caps image/video resolution so that ``generate()`` on a few frames takes well under a second.
    """
    import torch
    from transformers import (Qwen2_5_VLConfig, Qwen2_5_VLForConditionalGeneration, Qwen2_5_VLProcessor,
                              Qwen2VLImageProcessor, Qwen2VLVideoProcessor)

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    tokenizer, ids = _qwen_tokenizer()
    pixels = {"shortest_edge": 56 * 56, "longest_edge": 112 * 112}
    image_processor = Qwen2VLImageProcessor(size=pixels)
    video_processor = Qwen2VLVideoProcessor(size=pixels)
    processor = Qwen2_5_VLProcessor(image_processor=image_processor, tokenizer=tokenizer,
                                    video_processor=video_processor, chat_template=QWEN_CHAT_TEMPLATE)
    config = Qwen2_5_VLConfig(
        text_config=dict(vocab_size=len(tokenizer), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=2048,
                         rope_parameters={"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [2, 3, 3]},
                         bos_token_id=ids["<|endoftext|>"], eos_token_id=ids["<|im_end|>"],
                         pad_token_id=ids["<|endoftext|>"]),
        vision_config=dict(depth=2, hidden_size=32, intermediate_size=64, num_heads=2, out_hidden_size=64,
                           patch_size=14, spatial_merge_size=2, temporal_patch_size=2, window_size=56,
                           fullatt_block_indexes=[1], tokens_per_second=2),
        image_token_id=ids["<|image_pad|>"], video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"], vision_end_token_id=ids["<|vision_end|>"],
        bos_token_id=ids["<|endoftext|>"], eos_token_id=ids["<|im_end|>"], pad_token_id=ids["<|endoftext|>"],
    )
    torch.manual_seed(seed)
    model = Qwen2_5_VLForConditionalGeneration(config).eval()
    model.generation_config.eos_token_id = ids["<|im_end|>"]
    model.generation_config.pad_token_id = ids["<|endoftext|>"]
    model.save_pretrained(folder)
    processor.save_pretrained(folder)
    return folder


def _qwen_tokenizer():
    tokenizer = train_byte_bpe(QWEN_SPECIAL_TOKENS)
    tokenizer.add_special_tokens({"eos_token": "<|im_end|>", "pad_token": "<|endoftext|>"})
    tokenizer.chat_template = QWEN_CHAT_TEMPLATE
    return tokenizer, {t: tokenizer.convert_tokens_to_ids(t) for t in QWEN_SPECIAL_TOKENS}


def build_tiny_qwen3_vl(folder: str | Path, *, seed: int = 0) -> Path:
    """Save a tiny random Qwen3-VL (2 text layers, hidden 64, 2-block vision tower, patch 16) to ``folder``.

    Loads with ``AutoModelForImageTextToText`` / ``AutoProcessor``; its processor writes each frame
    pair's timestamp ("<1.3 seconds>") into the prompt from the video metadata it is given.
    """
    import torch
    from transformers import (Qwen2VLImageProcessor, Qwen3VLConfig, Qwen3VLForConditionalGeneration,
                              Qwen3VLProcessor)
    from transformers.models.qwen3_vl.video_processing_qwen3_vl import Qwen3VLVideoProcessor

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    tokenizer, ids = _qwen_tokenizer()
    pixels = {"shortest_edge": 64 * 64, "longest_edge": 128 * 128}
    processor = Qwen3VLProcessor(image_processor=Qwen2VLImageProcessor(size=pixels, patch_size=16), tokenizer=tokenizer,
                                 video_processor=Qwen3VLVideoProcessor(size=pixels, patch_size=16),
                                 chat_template=QWEN_CHAT_TEMPLATE)
    config = Qwen3VLConfig(
        text_config=dict(vocab_size=len(tokenizer), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, head_dim=16,
                         rope_parameters={"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [2, 3, 3],
                                          "mrope_interleaved": True}),
        vision_config=dict(depth=2, hidden_size=32, intermediate_size=64, num_heads=2, out_hidden_size=64,
                           patch_size=16, num_position_embeddings=64, deepstack_visual_indexes=[1]),
        image_token_id=ids["<|image_pad|>"], video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"], vision_end_token_id=ids["<|vision_end|>"])
    torch.manual_seed(seed)
    model = Qwen3VLForConditionalGeneration(config).eval()
    model.generation_config.eos_token_id = ids["<|im_end|>"]
    model.generation_config.pad_token_id = ids["<|endoftext|>"]
    model.save_pretrained(folder)
    processor.save_pretrained(folder)
    return folder


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
