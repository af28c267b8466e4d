"""Tiny randomly initialised vision-language models of each baseline's architecture, built offline.

No weights can be downloaded (here, in CI, or for a user checking a route before a GPU run), so the
route check (``mvx-bench routes``) and the tests build each architecture with tiny dimensions and
random weights: config, tokenizer (a byte-level BPE trained on the spot) and processor, with a chat
template that renders images/videos the way the real checkpoint's template does (including its
quirks: LLaVA-OneVision's template puts every image and video before the text). They test plumbing
(loading, templates, what reaches the processor), never accuracy.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable

__all__ = ["QWEN_CHAT_TEMPLATE", "QWEN_SPECIAL_TOKENS", "train_byte_bpe", "build_tiny_qwen2_5_vl", "build_tiny_qwen3_vl",
           "build_tiny_qwen3_5", "build_tiny_gemma3", "build_tiny_llava_onevision", "build_tiny_idefics3", "build_tiny_internvl",
           "build_tiny_pixtral", "build_tiny_phi4_multimodal", "BUILDERS"]

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


def train_byte_bpe(special_tokens: list[str], vocab_size: int = 400, named: dict[str, str] | None = None):
    """A byte-level BPE tokenizer trained on the spot (the `tokenizers` library), as a fast tokenizer.

    ``named``: model-specific named special tokens (``{"boi_token": "<start_of_image>"}``), which
    processors read as tokenizer attributes (``tokenizer.boi_token``, ``tokenizer.boi_token_id``)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=special_tokens,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(_CORPUS * 4, trainer=trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tok, extra_special_tokens=dict(named or {}))


def build_tiny_qwen2_5_vl(folder: str | Path, *, seed: int = 0) -> Path:
    """Save a tiny random Qwen2.5-VL (2 text layers, hidden 64, 2-block vision tower) to ``folder``.

    The folder loads with ``AutoModelForImageTextToText`` / ``Qwen2_5_VLForConditionalGeneration``
    and ``AutoProcessor``, and with lmms-eval's built-in ``qwen2_5_vl`` adapter (``pretrained=<folder>,
    attn_implementation=sdpa,device=cpu,device_map=cpu``). Its processor carries a Qwen chat template
    and caps image/video resolution so that ``generate()`` on a few frames takes well under a second.
    """
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
    _save(folder, Qwen2_5_VLForConditionalGeneration, config, processor, ids["<|im_end|>"], ids["<|endoftext|>"], seed)
    return folder


def _qwen_tokenizer():
    tokenizer = train_byte_bpe(QWEN_SPECIAL_TOKENS)
    tokenizer.add_special_tokens({"eos_token": "<|im_end|>", "pad_token": "<|endoftext|>"})
    tokenizer.chat_template = QWEN_CHAT_TEMPLATE
    return tokenizer, {t: tokenizer.convert_tokens_to_ids(t) for t in QWEN_SPECIAL_TOKENS}


def _qwen3_processor():
    """Qwen3-VL's processor (also Qwen3.5's): patch 16, timestamps from the video metadata."""
    from transformers import Qwen2VLImageProcessor, Qwen3VLProcessor
    from transformers.models.qwen3_vl.video_processing_qwen3_vl import Qwen3VLVideoProcessor

    tokenizer, ids = _qwen_tokenizer()
    pixels = {"shortest_edge": 64 * 64, "longest_edge": 128 * 128}
    processor = Qwen3VLProcessor(image_processor=Qwen2VLImageProcessor(size=pixels, patch_size=16), tokenizer=tokenizer,
                                 video_processor=Qwen3VLVideoProcessor(size=pixels, patch_size=16),
                                 chat_template=QWEN_CHAT_TEMPLATE)
    return processor, tokenizer, ids


_QWEN3_VISION = dict(depth=2, hidden_size=32, intermediate_size=64, num_heads=2, out_hidden_size=64, patch_size=16,
                     num_position_embeddings=64)
_QWEN3_ROPE = {"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [2, 3, 3], "mrope_interleaved": True}


def _qwen_ids(ids: dict[str, int]) -> dict[str, int]:
    return dict(image_token_id=ids["<|image_pad|>"], video_token_id=ids["<|video_pad|>"],
                vision_start_token_id=ids["<|vision_start|>"], vision_end_token_id=ids["<|vision_end|>"])


def build_tiny_qwen3_vl(folder: str | Path, *, seed: int = 0) -> Path:
    """Save a tiny random Qwen3-VL (2 text layers, hidden 64, 2-block vision tower, patch 16) to ``folder``.

    Loads with ``AutoModelForImageTextToText`` / ``AutoProcessor``; its processor writes each frame
    pair's timestamp ("<1.3 seconds>") into the prompt from the video metadata it is given.
    """
    from transformers import Qwen3VLConfig, Qwen3VLForConditionalGeneration

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    processor, tokenizer, ids = _qwen3_processor()
    config = Qwen3VLConfig(
        text_config=_text_config(len(tokenizer), rope_parameters=_QWEN3_ROPE),
        vision_config=dict(_QWEN3_VISION, deepstack_visual_indexes=[1]), **_qwen_ids(ids))
    _save(folder, Qwen3VLForConditionalGeneration, config, processor, ids["<|im_end|>"], ids["<|endoftext|>"], seed)
    return folder


def build_tiny_qwen3_5(folder: str | Path, *, seed: int = 0) -> Path:
    """Save a tiny random Qwen3.5 (Qwen3.6's architecture: one linear-attention and one full-attention
    layer, hidden 64) with Qwen3-VL's processor to ``folder``."""
    from transformers import Qwen3_5Config, Qwen3_5ForConditionalGeneration

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    processor, tokenizer, ids = _qwen3_processor()
    text = _text_config(len(tokenizer), rope_parameters=dict(_QWEN3_ROPE, partial_rotary_factor=1.0),
                        layer_types=["linear_attention", "full_attention"], linear_conv_kernel_dim=4,
                        linear_key_head_dim=16, linear_value_head_dim=16, linear_num_key_heads=2,
                        linear_num_value_heads=4)
    config = Qwen3_5Config(text_config=text, vision_config=dict(_QWEN3_VISION), **_qwen_ids(ids))
    _save(folder, Qwen3_5ForConditionalGeneration, config, processor, ids["<|im_end|>"], ids["<|endoftext|>"], seed)
    return folder


def _tokenizer(special: list[str], roles: dict[str, str], template: str, named: dict[str, str] | None = None):
    """A tiny tokenizer with ``special`` tokens, the model's roles (bos/eos/pad) and chat template, and
    the ids of the special tokens."""
    tok = train_byte_bpe(special, named=named)
    tok.add_special_tokens(roles)
    tok.chat_template = template
    return tok, {t: tok.convert_tokens_to_ids(t) for t in special}


def _save(folder: Path, model_cls, config, processor, eos_id: int, pad_id: int, seed: int):
    """Build ``model_cls(config)`` from ``seed`` and save it with ``processor``; returns the model."""
    import torch

    torch.manual_seed(seed)
    model = model_cls(config).eval()
    model.generation_config.eos_token_id = eos_id
    model.generation_config.pad_token_id = pad_id
    model.save_pretrained(folder)
    processor.save_pretrained(folder)
    return model


def _text_config(vocab: int, **extra) -> dict:
    """A 2-layer, 64-wide decoder (the language half of every tiny model)."""
    return dict(vocab_size=vocab, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                num_key_value_heads=2, head_dim=16, max_position_embeddings=4096, **extra)


# Gemma-3 (google/gemma-3-*-it): images render as <start_of_image> where they stand; the processor
# expands each into image_seq_length soft tokens.
GEMMA3_CHAT_TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}"
    "<start_of_turn>{{ 'model' if message['role'] == 'assistant' else message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] | trim }}"
    "{% else %}{% for item in message['content'] %}"
    "{% if item['type'] == 'image' %}<start_of_image>{% elif item['type'] == 'text' %}{{ item['text'] | trim }}{% endif %}"
    "{% endfor %}{% endif %}<end_of_turn>\n{% endfor %}"
    "{% if add_generation_prompt %}<start_of_turn>model\n{% endif %}"
)


def build_tiny_gemma3(folder: str | Path, *, seed: int = 0) -> Path:
    """Gemma-3 (``Gemma3ForConditionalGeneration``): SigLIP tower at 32 px, 4 soft tokens per image."""
    from transformers import Gemma3Config, Gemma3ForConditionalGeneration, Gemma3ImageProcessor, Gemma3Processor

    folder = Path(folder)
    special = ["<pad>", "<eos>", "<bos>", "<start_of_turn>", "<end_of_turn>", "<start_of_image>", "<end_of_image>",
               "<image_soft_token>"]
    tok, ids = _tokenizer(special, {"bos_token": "<bos>", "eos_token": "<end_of_turn>", "pad_token": "<pad>"},
                          GEMMA3_CHAT_TEMPLATE, named={"boi_token": "<start_of_image>", "eoi_token": "<end_of_image>",
                                                       "image_token": "<image_soft_token>"})
    processor = Gemma3Processor(image_processor=Gemma3ImageProcessor(size={"height": 32, "width": 32}), tokenizer=tok,
                                chat_template=GEMMA3_CHAT_TEMPLATE, image_seq_length=4)
    config = Gemma3Config(
        text_config=_text_config(len(tok), sliding_window=64, query_pre_attn_scalar=16, pad_token_id=ids["<pad>"]),
        vision_config=dict(hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2,
                           image_size=32, patch_size=8),
        mm_tokens_per_image=4, boi_token_index=ids["<start_of_image>"], eoi_token_index=ids["<end_of_image>"],
        image_token_index=ids["<image_soft_token>"], pad_token_id=ids["<pad>"], eos_token_id=ids["<end_of_turn>"])
    _save(folder, Gemma3ForConditionalGeneration, config, processor, ids["<end_of_turn>"], ids["<pad>"], seed)
    return folder


# LLaVA-OneVision (llava-hf/llava-onevision-qwen2-*-ov-hf), verbatim in structure: it renders ALL images,
# then ALL videos, then all text, so a "<label>:" text item never stands next to its video.
LLAVA_ONEVISION_CHAT_TEMPLATE = (
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + ' '}}"
    "{% for content in message['content'] | selectattr('type', 'equalto', 'image') %}{{ '<image>' }}{% endfor %}"
    "{% for content in message['content'] | selectattr('type', 'equalto', 'video') %}{{ '<video>' }}{% endfor %}"
    "{% for content in message['content'] | selectattr('type', 'equalto', 'text') %}{{ '\n' + content['text'] }}{% endfor %}"
    "{{'<|im_end|>\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)


def build_tiny_llava_onevision(folder: str | Path, *, seed: int = 0) -> Path:
    """LLaVA-OneVision (``LlavaOnevisionForConditionalGeneration``): Qwen2 text, SigLIP at 32 px, one grid."""
    from transformers import (LlavaOnevisionConfig, LlavaOnevisionForConditionalGeneration,
                              LlavaOnevisionImageProcessor, LlavaOnevisionProcessor, LlavaOnevisionVideoProcessor)

    folder = Path(folder)
    special = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<image>", "<video>"]
    tok, ids = _tokenizer(special, {"eos_token": "<|im_end|>", "pad_token": "<|endoftext|>"},
                          LLAVA_ONEVISION_CHAT_TEMPLATE, named={"image_token": "<image>", "video_token": "<video>"})
    size = {"height": 32, "width": 32}
    processor = LlavaOnevisionProcessor(
        image_processor=LlavaOnevisionImageProcessor(size=size, image_grid_pinpoints=[[32, 32]]),
        video_processor=LlavaOnevisionVideoProcessor(size=size), tokenizer=tok, num_image_tokens=16,
        vision_feature_select_strategy="full", chat_template=LLAVA_ONEVISION_CHAT_TEMPLATE)
    config = LlavaOnevisionConfig(
        text_config=dict(model_type="qwen2", **_text_config(len(tok))),
        vision_config=dict(model_type="siglip_vision_model", hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                           num_attention_heads=2, image_size=32, patch_size=8),
        image_token_index=ids["<image>"], video_token_index=ids["<video>"], vision_feature_select_strategy="full",
        vision_feature_layer=-1, image_grid_pinpoints=[[32, 32]], tie_word_embeddings=False)
    _save(folder, LlavaOnevisionForConditionalGeneration, config, processor,
          ids["<|im_end|>"], ids["<|endoftext|>"], seed)
    return folder


# Idefics3 (HuggingFaceM4/Idefics3-8B-Llama3): images render as <image> where they stand.
IDEFICS3_CHAT_TEMPLATE = (
    "<|begin_of_text|>{% for message in messages %}{{ message['role'] | capitalize }}"
    "{% if message['content'][0]['type'] == 'image' %}{{ ':' }}{% else %}{{ ': ' }}{% endif %}"
    "{% for line in message['content'] %}{% if line['type'] == 'text' %}{{ line['text'] }}"
    "{% elif line['type'] == 'image' %}{{ '<image>' }}{% endif %}{% endfor %}<end_of_utterance>\n{% endfor %}"
    "{% if add_generation_prompt %}{{ 'Assistant:' }}{% endif %}"
)


def build_tiny_idefics3(folder: str | Path, *, seed: int = 0) -> Path:
    """Idefics3 (``Idefics3ForConditionalGeneration``): Llama text, SigLIP at 32 px, no image splitting."""
    from transformers import Idefics3Config, Idefics3ForConditionalGeneration, Idefics3ImageProcessor, Idefics3Processor

    folder = Path(folder)
    special = ["<|begin_of_text|>", "<|end_of_text|>", "<end_of_utterance>", "<image>", "<fake_token_around_image>",
               "<global-img>"] + [f"<row_{i}_col_{j}>" for i in range(1, 7) for j in range(1, 7)]
    tok, ids = _tokenizer(special, {"bos_token": "<|begin_of_text|>", "eos_token": "<end_of_utterance>",
                            "pad_token": "<|end_of_text|>"}, IDEFICS3_CHAT_TEMPLATE)
    image_processor = Idefics3ImageProcessor(size={"longest_edge": 32}, max_image_size={"longest_edge": 32},
                                             do_image_splitting=False)
    processor = Idefics3Processor(image_processor=image_processor, tokenizer=tok, image_seq_len=4,
                                  chat_template=IDEFICS3_CHAT_TEMPLATE)
    config = Idefics3Config(
        text_config=dict(model_type="llama", **_text_config(len(tok)), pad_token_id=ids["<|end_of_text|>"]),
        vision_config=dict(hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2,
                           image_size=32, patch_size=8),
        scale_factor=2, image_token_id=ids["<image>"], pad_token_id=ids["<|end_of_text|>"], tie_word_embeddings=False)
    _save(folder, Idefics3ForConditionalGeneration, config, processor,
          ids["<end_of_utterance>"], ids["<|end_of_text|>"], seed)
    return folder


# InternVL3.5 -HF checkpoints (OpenGVLab/InternVL3_5-*-HF): <IMG_CONTEXT> / <video> where they stand;
# the processor writes "Frame1: <img>...</img>" per frame of a video.
INTERNVL_CHAT_TEMPLATE = (
    "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\n' }}"
    "{% if message['content'] is string %}{{ message['content'] }}{% else %}{% for content in message['content'] %}"
    "{% if content['type'] == 'image' %}{{ '<IMG_CONTEXT>\n' }}{% elif content['type'] == 'video' %}{{ '<video>\n' }}"
    "{% elif content['type'] == 'text' %}{{ content['text'] }}{% endif %}{% endfor %}{% endif %}{{ '<|im_end|>\n' }}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)


def build_tiny_internvl(folder: str | Path, *, seed: int = 0) -> Path:
    """InternVL (HF, ``InternVLForConditionalGeneration``): Qwen2 text, InternViT at 32 px, 4 tokens per tile."""
    from transformers import (GotOcr2ImageProcessor, InternVLConfig, InternVLForConditionalGeneration,
                              InternVLProcessor, InternVLVideoProcessor)

    folder = Path(folder)
    special = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<img>", "</img>", "<IMG_CONTEXT>", "<video>"]
    tok, ids = _tokenizer(special, {"eos_token": "<|im_end|>", "pad_token": "<|endoftext|>"},
                          INTERNVL_CHAT_TEMPLATE, named={"start_image_token": "<img>", "end_image_token": "</img>",
                                                         "context_image_token": "<IMG_CONTEXT>", "video_token": "<video>"})
    size = {"height": 32, "width": 32}
    processor = InternVLProcessor(image_processor=GotOcr2ImageProcessor(size=size, crop_to_patches=False),
                                  video_processor=InternVLVideoProcessor(size=size), tokenizer=tok,
                                  image_seq_length=4, chat_template=INTERNVL_CHAT_TEMPLATE)
    config = InternVLConfig(
        text_config=dict(model_type="qwen2", **_text_config(len(tok))),
        vision_config=dict(hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2,
                           image_size=[32, 32], patch_size=[8, 8]),
        image_token_id=ids["<IMG_CONTEXT>"], downsample_ratio=0.5, tie_word_embeddings=False)
    _save(folder, InternVLForConditionalGeneration, config, processor, ids["<|im_end|>"], ids["<|endoftext|>"], seed)
    return folder


# Pixtral (mistral-community/pixtral-12b, a LLaVA checkpoint with a Pixtral vision tower): [IMG] where it stands.
PIXTRAL_CHAT_TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}{% if message['role'] == 'user' %}[INST]"
    "{% if message['content'] is string %}{{ message['content'] }}{% else %}{% for chunk in message['content'] %}"
    "{% if chunk['type'] == 'text' %}{{ chunk['text'] }}{% elif chunk['type'] == 'image' %}[IMG]"
    "{% else %}{{ raise_exception('Unrecognized content type!') }}{% endif %}{% endfor %}{% endif %}[/INST]"
    "{% else %}{{ message['content'] if message['content'] is string else message['content'][0]['text'] }}{{ eos_token }}"
    "{% endif %}{% endfor %}"
)


def build_tiny_pixtral(folder: str | Path, *, seed: int = 0) -> Path:
    """Pixtral as HF LLaVA (``LlavaForConditionalGeneration`` + Pixtral vision, Mistral text), 32 px images."""
    from transformers import LlavaConfig, LlavaForConditionalGeneration, PixtralImageProcessor, PixtralProcessor

    folder = Path(folder)
    special = ["<unk>", "<s>", "</s>", "[INST]", "[/INST]", "[IMG]", "[IMG_BREAK]", "[IMG_END]"]
    tok, ids = _tokenizer(special,
                          {"bos_token": "<s>", "eos_token": "</s>", "pad_token": "<unk>", "unk_token": "<unk>"},
                          PIXTRAL_CHAT_TEMPLATE)
    processor = PixtralProcessor(image_processor=PixtralImageProcessor(size={"longest_edge": 32}, patch_size=8),
                                 tokenizer=tok, patch_size=8, chat_template=PIXTRAL_CHAT_TEMPLATE)
    config = LlavaConfig(
        text_config=dict(model_type="mistral", **_text_config(len(tok))),
        vision_config=dict(model_type="pixtral", hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                           num_attention_heads=2, image_size=32, patch_size=8, head_dim=16),
        image_token_index=ids["[IMG]"], projector_hidden_act="gelu", vision_feature_layer=-1,
        vision_feature_select_strategy="full", tie_word_embeddings=False)
    _save(folder, LlavaForConditionalGeneration, config, processor, ids["</s>"], ids["<unk>"], seed)
    return folder


# Phi-4-multimodal, HF format (microsoft/Phi-4-multimodal-instruct at revision refs/pr/70): <|image|> where it stands.
PHI4_CHAT_TEMPLATE = (
    "{% for message in messages %}{{ '<|' + message['role'] + '|>' }}"
    "{% if message['content'] is string %}{{ message['content'] }}{% else %}{% for content in message['content'] %}"
    "{% if content['type'] == 'image' %}{{ '<|image|>' }}{% elif content['type'] == 'audio' %}{{ '<|audio|>' }}"
    "{% elif content['type'] == 'text' %}{{ content['text'] }}{% endif %}{% endfor %}{% endif %}{{ '<|end|>' }}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|assistant|>' }}{% endif %}"
)


def build_tiny_phi4_multimodal(folder: str | Path, *, seed: int = 0) -> Path:
    """Phi-4-multimodal (``Phi4MultimodalForCausalLM``, native): Phi-3 text, SigLIP at the processor's fixed
    448 px / patch 14 geometry (1 layer, 32 wide), one crop per image, a 1-block audio encoder."""
    from transformers import (Phi4MultimodalConfig, Phi4MultimodalFeatureExtractor, Phi4MultimodalForCausalLM,
                              Phi4MultimodalImageProcessor, Phi4MultimodalProcessor)

    folder = Path(folder)
    special = ["<|endoftext|>", "<|user|>", "<|assistant|>", "<|system|>", "<|end|>", "<|image|>", "<|audio|>"]
    tok, ids = _tokenizer(special, {"bos_token": "<|endoftext|>", "eos_token": "<|end|>", "pad_token": "<|endoftext|>"},
                          PHI4_CHAT_TEMPLATE, named={"image_token": "<|image|>", "audio_token": "<|audio|>"})
    processor = Phi4MultimodalProcessor(image_processor=Phi4MultimodalImageProcessor(dynamic_hd=1),
                                        audio_processor=Phi4MultimodalFeatureExtractor(), tokenizer=tok,
                                        chat_template=PHI4_CHAT_TEMPLATE)
    text = _text_config(len(tok))
    text.pop("head_dim")
    config = Phi4MultimodalConfig(
        **text, bos_token_id=ids["<|endoftext|>"], eos_token_id=ids["<|end|>"], pad_token_id=ids["<|endoftext|>"],
        vision_config=dict(hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2,
                           image_token_id=ids["<|image|>"]),
        audio_config=dict(hidden_size=32, intermediate_size=64, num_blocks=1, num_attention_heads=2,
                          ext_pw_out_channel=32, depthwise_separable_out_channel=32, nemo_conv_channels=32,
                          audio_token_id=ids["<|audio|>"]))
    model = _save(folder, Phi4MultimodalForCausalLM, config, processor, ids["<|end|>"], ids["<|endoftext|>"], seed)
    _save_lora(model, folder / "vision-lora")
    return folder


def _save_lora(model, folder: Path) -> None:
    """A PEFT LoRA on the text layers (the layout of Phi-4-multimodal's ``vision-lora`` folder), so the
    route check loads and activates an adapter as a real run does."""
    from peft import LoraConfig, get_peft_model

    peft_model = get_peft_model(model, LoraConfig(r=2, lora_alpha=4, target_modules=["qkv_proj", "o_proj"]))
    peft_model.save_pretrained(folder)


#: Tiny builders by transformers ``model_type`` (a harness config's ``architecture``).
BUILDERS: dict[str, Callable[..., Path]] = {
    "qwen2_5_vl": build_tiny_qwen2_5_vl, "qwen3_vl": build_tiny_qwen3_vl, "qwen3_5": build_tiny_qwen3_5,
    "gemma3": build_tiny_gemma3, "llava_onevision": build_tiny_llava_onevision, "idefics3": build_tiny_idefics3,
    "internvl": build_tiny_internvl, "llava": build_tiny_pixtral, "phi4_multimodal": build_tiny_phi4_multimodal,
}
