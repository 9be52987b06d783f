"""Layered configuration: defaults < preset < project.yaml < environment < flags.

Every layer is a nested mapping `{section: {key: value}}`. Each value is checked
against the dataclass field it sets; an unknown key or a wrong type raises
ConfigError naming the file, the key and the line. Nothing here reads the
environment or the disk on its own: callers pass the environment mapping in, and
files are read through `load_yaml_layer`.
"""

from __future__ import annotations

import dataclasses
import math
import re
import typing
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path
from typing import Any, NamedTuple

import yaml

from novel_agent.config.providers import is_provider, provider_names
from novel_agent.errors import ConfigError
from novel_agent.files import yaml_problem
from novel_agent.paths import config_dir

STAGES = ("planner", "writer", "extractor", "summarizer")
# The stages `llm.stages` may give a model of their own; a stage not named here (the
# book's names) asks the planner's model.
MODEL_STAGES = ("planner", "writer", "extractor", "summarizer", "auditor", "outline")
STAGE_MODEL = {"names": "planner"}
# What `llm.stages.<stage>` may set: the llm keys of one model, its answer's cap and its
# window (context.window for that stage's model); any key left out is llm's.
STAGE_KEYS = ("provider", "model", "base_url", "api_key_env", "local_model", "local_context",
              "timeout", "max_retries", "temperature", "prices", "max_tokens", "window")
# The keys that belong to llm's provider: a stage on another provider does not take them
# from llm (gpt-4o is no Anthropic model, an OpenAI server's URL no Anthropic endpoint, its
# prices not theirs); left out, they are that provider's defaults.
PROVIDER_KEYS = ("model", "base_url", "api_key_env", "prices")
# The writer's output cap per word of generation.scene_max_words: English prose runs
# ~1.3 tokens a word (cl100k, Qwen's and SmolLM2's tokenizers alike); the rest is room
# to finish the last sentence. 400 words -> 700 tokens.
WRITER_TOKENS_PER_WORD = 1.75


PLANNER_SHARES = {"overall": 0.08, "loops": 0.10, "characters": 0.08, "recent": 0.20,
                  "relationships": 0.05, "locations": 0.03, "now": 0.04, "facts": 0.05,
                  "lore": 0.04}
EXTRACTOR_SHARES = {"plan": 0.04, "loops": 0.08, "characters": 0.04}
SUMMARIZER_SHARES = {"scenes": 0.75, "previous": 0.15}
SHARE_KEYS = {"planner_shares": PLANNER_SHARES, "extractor_shares": EXTRACTOR_SHARES,
              "summarizer_shares": SUMMARIZER_SHARES}
# The weights of retrieval's signals (context/retrieval.py says what each measures).
RELEVANCE = {"bm25": 3.0, "pov": 1.0, "character": 2.0, "location": 2.0, "loop": 2.0,
             "recency": 0.5, "pin": 5.0, "embedding": 3.0}
EMBEDDING_KEYS = ("model", "base_url", "api_key_env", "batch_size")
# Mappings merged key by key across layers (a layer may set one share or one weight).
MAPPING_KEYS = {**SHARE_KEYS, "relevance": RELEVANCE}


@dataclass(frozen=True)
class LLMConfig:
    """Which model answers, and how."""

    # openai, anthropic, llm (any model of the llm library), local, offline, or auto: local if
    # its model file is installed, else offline
    provider: str = "auto"
    model: str = ""                 # "" = the provider's default model; llm: an id or alias of `llm models`
    base_url: str = ""              # openai: any OpenAI-compatible endpoint; anthropic: "" = api.anthropic.com
    # the NAME of the variable; keys never live in files (anthropic: ANTHROPIC_API_KEY unless set;
    # llm: not used, the key is the one llm finds: `llm keys set`, or the model's variable)
    api_key_env: str = "OPENAI_API_KEY"
    # local provider: smollm2-135m | qwen2.5-coder-1.5b | auto (the best installed) | a .gguf path
    local_model: str = "auto"
    local_context: int = 0          # local provider: llama.cpp's n_ctx; 0 = the model's
    timeout: float = 120.0          # seconds; local: without a token (an idle timeout)
    max_retries: int = 3            # tries again after a 429, a 5xx or a timeout, backing off
    temperature: float = 0.8        # the model's sampling temperature
    seed: int = 0                   # the model's seed (the offline model's story too)
    planner_max_tokens: int = 600   # the planner's answer, at most
    writer_max_tokens: int = 0      # 0 = WRITER_TOKENS_PER_WORD (1.75) x generation.scene_max_words
    extractor_max_tokens: int = 800   # the extractor's answer, at most
    summarizer_max_tokens: int = 400  # a summary, at most
    # Dollars per million tokens {input, cached_input, output, cache_write?}; {} = configs/models.yaml's.
    prices: dict[str, float] = field(default_factory=dict)
    max_cost: float = 0.0           # dollars this project may spend in all; 0 = no ceiling
    # A model per stage: {planner|writer|extractor|summarizer|auditor|outline: {key: value}},
    # each stage setting any of provider, model, base_url, api_key_env, local_model,
    # local_context, timeout, max_retries, temperature, prices, max_tokens (its answer's
    # cap) and window (its model's); a key it leaves out is llm's. Merged key by key.
    stages: dict[str, dict[str, Any]] = field(default_factory=dict)


@dataclass(frozen=True)
class GenerationConfig:
    """What a tick produces and what it looks back on."""

    max_tools_per_tick: int = 3     # memory changes the planner may make a tick
    recent_scenes_count: int = 3    # scene summaries the planner sees
    full_text_scenes_count: int = 2   # the writer's last scenes in full text (typical length)
    summary_scenes_count: int = 3   # the writer's recent scene summaries (typical length)
    checkpoint_summary_interval: int = 10   # ticks between checkpoint summaries
    include_overall_summary: bool = True    # the planner sees the story so far
    enable_fact_extraction: bool = True     # the extractor's facts go to memory
    enable_entity_updates: bool = True      # its characters, loops, relationships, standing too
    scene_min_words: int = 200      # a scene under this is a notice (and doctor's problem at half)
    scene_max_words: int = 400      # the writer is asked for this at most, and cut there
    loop_overdue_after: int = 30    # a loop open longer than this many ticks is overdue


@dataclass(frozen=True)
class ContextConfig:
    """How prompts are packed into the model's window."""

    window: int = 0                 # 0 = its own (embedded; llama.cpp's /props), else configs/models.yaml
    max_prompt_tokens: int = 32000  # a cap below the window, for cost
    margin: int = 256               # tokens kept free below the window, for counting slack
    encoding: str = ""              # "" = chosen by model name
    # Usage shares of the recent tiers and tier 3 that raise compaction to level 1, 2, 3.
    compaction_thresholds: list[float] = field(default_factory=lambda: [0.50, 0.65, 0.80])
    # How full a prompt may be filled with relevant memory (the thresholds above steer
    # only the recent tiers' compaction): room under it flows to what is waiting.
    target_fill: float = 0.80
    # Shares of the writer's budget each tier may fill before compaction starts.
    tier3_share: float = 0.12       # tier 3: arc + checkpoint summaries, the story so far
    cast_share: float = 0.06        # the writer's share for the cast: POV, place, people, lore
    retrieved_share: float = 0.05   # the writer's share for older scenes chosen by relevance
    tier2_share: float = 0.08       # the writer's share for tier 2, the recent scene summaries
    tier1_share: float = 0.20       # the writer's share for tier 1, the last scenes in full text
    # The writer's share for the book's style (style.yaml): its lines always, its sample
    # passage whole, or its first sentences, within this; 0 = no style told.
    style_share: float = 0.03
    max_full_text_scenes: int = 10  # tier 1 never holds more scenes than this
    # What tier 1 shows the writer: "scenes", the last scenes whole; "ending", the newest
    # scene's last paragraphs only, the scenes before it as summaries (a small model shown
    # whole scenes writes them again); "auto": ending on an embedded local model.
    full_text: str = "auto"
    low_water: float = 0.5          # after a compaction a tier refills from this share of its cap
    summary_min_coverage: float = 0.8   # a summary naming less of its range is asked again
    # Shares of the other stages' budgets for their memory sections, filled item by item
    # (best first); what a section leaves unused flows to the next (in this order).
    planner_shares: dict[str, float] = field(default_factory=lambda: dict(PLANNER_SHARES))
    extractor_shares: dict[str, float] = field(   # the extractor's: merged key by key
        default_factory=lambda: dict(EXTRACTOR_SHARES))
    summarizer_shares: dict[str, float] = field(  # the summarizer's: merged key by key
        default_factory=lambda: dict(SUMMARIZER_SHARES))
    keep_prompt_logs: int = 50      # ticks whose prompt logs keep the messages sent
    prompt_log_ticks: int = 200     # ticks whose prompt logs are kept at all (a total cap)
    # Weights of retrieval's signals (older scenes and facts for the writer, facts for
    # the planner); merged key by key.
    relevance: dict[str, float] = field(default_factory=lambda: dict(RELEVANCE))
    # Optional embeddings (an OpenAI-compatible /embeddings): model ("" = off), base_url
    # ("" = llm.base_url), api_key_env ("" = llm.api_key_env), batch_size.
    embeddings: dict[str, str] = field(default_factory=dict)


MAX_INTERVAL = 604_800      # seconds: a week between two ticks at most


def interval_seconds(value: Any) -> float:
    """`value` (a number, or its text) as seconds between ticks: the one check of
    daemon.interval, `novel run --interval` and the live page's interval. ValueError,
    naming the value, unless it is a number from 0 to MAX_INTERVAL (NaN and infinity,
    which `nan` and `1e400` are, are not)."""
    try:
        seconds = math.nan if isinstance(value, bool) else float(value)
    except (TypeError, ValueError):
        seconds = math.nan
    if not 0 <= seconds <= MAX_INTERVAL:           # False for NaN
        raise ValueError(f"must be a number of seconds from 0 to {MAX_INTERVAL:,} (a week), "
                         f"not {value!r}")
    return seconds


@dataclass(frozen=True)
class DaemonConfig:
    """How `novel run` paces itself: the defaults of its flags."""

    interval: float = 0.0           # seconds between ticks (--interval), 0 to 604,800 (a week)
    max_ticks: int = 0              # ticks per run, 0 = no limit (--ticks)
    stop_at_words: int = 0          # stop once the book holds this many words, 0 = never
    max_failures: int = 5           # failed ticks in a row before the daemon gives up
    failure_backoff: float = 5.0    # seconds before the first retry; doubles per failure


class OutlineSizes(NamedTuple):
    """How big `novel outline` makes an outline: acts, chapters in all, beats per chapter,
    and each chapter's target length in scenes."""

    acts: int
    chapters: int
    beats: int
    scenes: int


CURVES = ("three_act", "five_act", "rising", "serial")   # story/outline/curves.py draws each one
REVISE_MODES = ("auto", "off")     # outline.revise: tick/stages/revise_outline.py
# The sizes an outline is made at when its keys are 0: (a served model's, an embedded
# local model's). A 1.5B keeps a short story whole: 3 acts, a chapter each, 6 beats, 6 scenes
# (at most 9 with each chapter's stretch; 4 chapters of 2 scenes ran to 12, past a short story).
OUTLINE_AUTO = {"chapters": (24, 3), "beats_per_chapter": (3, 2), "scenes_per_chapter": (4, 2)}


@dataclass(frozen=True)
class OutlineConfig:
    """The book's outline (`novel outline`): the tension curve its beats follow, and its sizes."""

    # The target tension (0-10) of each beat and scene, by where it falls in the book:
    # three_act | five_act | rising | serial (a beat the model gives none takes it).
    curve: str = "three_act"
    acts: int = 3                   # acts (or parts) `novel outline` makes
    chapters: int = 0               # chapters in all; 0 = 24, or 3 on an embedded local model
    beats_per_chapter: int = 0      # beats of each chapter; 0 = 3, or 2 on an embedded local model
    # A chapter's target length in scenes; 0 = 4, or 2 on an embedded local model.
    scenes_per_chapter: int = 0
    # At a checkpoint (a chapter closes) where the story has drifted from the outline
    # (beats missed or landed out of order, new threads no beat covers), one call to the
    # planner's model revises the rest of it, locked parts kept: auto | off.
    revise: str = "auto"
    revise_every: int = 1           # a checkpoint every N chapters the book closes

    def sizes(self, small: bool) -> OutlineSizes:
        """The sizes to make an outline at (`small`: for an embedded local model), the keys
        left at 0 taken from OUTLINE_AUTO; never fewer chapters than acts."""
        def size(key: str) -> int:
            return getattr(self, key) or OUTLINE_AUTO[key][small]
        return OutlineSizes(self.acts, max(self.acts, size("chapters")),
                            size("beats_per_chapter"), size("scenes_per_chapter"))


REWRITES = ("local", "always", "off")     # style.rewrite: tick/prose_step.py


@dataclass(frozen=True)
class StyleConfig:
    """The prose held to the book's style (style.yaml) and kept from overused phrases."""

    # How many times one phrase of the slop list (the built-in one and style.yaml's
    # avoid) may be used in any `style.recent_scenes` scenes running (0: a stock phrase
    # is never wanted): the writer is told the phrases the last scenes used, and a scene
    # that goes over is a notice (and its sentence written again: style.rewrite).
    max_phrase_uses: int = 0
    recent_scenes: int = 10         # the scenes before this one the phrases are counted over
    # Where a scene is mended: one whose person or tense is not style.yaml's is written
    # again once and the better of the two kept; each sentence with a phrase over
    # max_phrase_uses, or five words an earlier scene said, is written again on its own.
    # local (on an embedded local model), always, or off (a notice only).
    rewrite: str = "local"


AUDIT_MODES = ("off", "report", "revise", "hold")
FULL_TEXT = ("auto", "scenes", "ending")
SEVERITIES = ("minor", "major", "critical")


@dataclass(frozen=True)
class AuditConfig:
    """The continuity audit between write and commit (audit/policy.py says what each mode does)."""

    mode: str = "report"            # off | report | revise | hold
    llm: bool = False               # also ask the auditor stage (an LLM call per tick)
    act_on: str = "major"           # the least severity revise and hold act on
    loop_overdue: int = 0           # ticks a loop may go unmentioned; 0 = generation.loop_overdue_after
    repeat_window: int = 5          # the last K scenes a passage, title or opening is compared with
    repeat_threshold: float = 0.5   # Jaccard of 5-word shingles at which a paragraph repeats
    max_tokens: int = 600           # the auditor's answer


@dataclass(frozen=True)
class Config:
    """The merged configuration of one project."""

    llm: LLMConfig = field(default_factory=LLMConfig)
    generation: GenerationConfig = field(default_factory=GenerationConfig)
    context: ContextConfig = field(default_factory=ContextConfig)
    daemon: DaemonConfig = field(default_factory=DaemonConfig)
    audit: AuditConfig = field(default_factory=AuditConfig)
    outline: OutlineConfig = field(default_factory=OutlineConfig)
    style: StyleConfig = field(default_factory=StyleConfig)
    preset: str = "balanced"

    def max_tokens(self, stage: str) -> int:
        """The output cap of a stage ("planner", "writer", "extractor", "summarizer"); the
        writer's follows generation.scene_max_words unless llm.writer_max_tokens is set; the
        outline is made by the planner's model, with its cap; llm.stages.<stage>.max_tokens
        before all."""
        own = self.llm.stages.get(stage, {}).get("max_tokens")
        if own is not None:
            return int(own)
        if stage == "outline":
            return self.max_tokens("planner")
        if stage == "auditor":
            return self.audit.max_tokens
        if stage == "writer" and self.llm.writer_max_tokens == 0:
            return math.ceil(self.generation.scene_max_words * WRITER_TOKENS_PER_WORD)
        return getattr(self.llm, f"{stage}_max_tokens")

    def other_provider(self, stage: str) -> bool:
        """Whether llm.stages.<stage> sets a provider other than llm's (`auto` with a
        base_url is openai's): its PROVIDER_KEYS then are not llm's."""
        own = self.llm.stages.get(STAGE_MODEL.get(stage, stage), {})
        if "provider" not in own:
            return False
        named = self.llm.provider
        if named == "auto" and self.llm.base_url:
            named = "openai"
        return own["provider"] != named

    def for_stage(self, stage: str) -> Config:
        """The configuration `stage`'s model is built from: llm with the keys
        llm.stages.<stage> sets (context.window too, from its `window`), no stages of its
        own; this config itself when the stage sets nothing. A stage on another provider
        than llm's takes none of llm's PROVIDER_KEYS; one on a server of its own sends no
        key unless it names its own api_key_env. A stage with no model of its own
        (STAGE_MODEL) asks for the one it borrows."""
        own = self.llm.stages.get(STAGE_MODEL.get(stage, stage), {})
        if not self.llm.stages:
            return self
        values = {k: v for k, v in own.items() if k not in ("max_tokens", "window")}
        if self.other_provider(stage):
            fresh = LLMConfig()
            values = {**{k: getattr(fresh, k) for k in PROVIDER_KEYS}, **values}
        if own.get("base_url", self.llm.base_url) != self.llm.base_url \
                and "api_key_env" not in own:
            values["api_key_env"] = ""      # llm's key is for llm's server: none is sent
        config = dataclasses.replace(self, llm=dataclasses.replace(self.llm, stages={}, **values))
        if "window" in own:
            config = dataclasses.replace(
                config, context=dataclasses.replace(self.context, window=own["window"]))
        return config

    def to_dict(self) -> dict[str, Any]:
        """A plain nested dict, for `novel config show` and reports."""
        return dataclasses.asdict(self)


SECTIONS: dict[str, type] = {
    "llm": LLMConfig,
    "generation": GenerationConfig,
    "context": ContextConfig,
    "daemon": DaemonConfig,
    "audit": AuditConfig,
    "outline": OutlineConfig,
    "style": StyleConfig,
}


@dataclass
class Layer:
    """One source of settings: its values, where they came from, and their lines."""

    source: str
    values: dict[str, dict[str, Any]]
    lines: dict[tuple[str, ...], int] = field(default_factory=dict)

    def line(self, *path: str) -> int | None:
        return self.lines.get(tuple(path))


def _key_lines(node: yaml.Node, source: str,
               prefix: tuple[str, ...] = ()) -> dict[tuple[str, ...], int]:
    """Map each key path of a composed YAML mapping to its 1-based line. A key given twice
    in one mapping is a ConfigError at the second (YAML would keep it and silently drop
    the first: two `llm:` blocks lose the first one's settings)."""
    lines: dict[tuple[str, ...], int] = {}
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            path = prefix + (str(key_node.value),)
            line = key_node.start_mark.line + 1
            if path in lines and key_node.tag != "tag:yaml.org,2002:merge":
                raise ConfigError(f"duplicate key '{'.'.join(path)}' (first on line "
                                  f"{lines[path]}): keep one, merged by hand", file=source,
                                  key=".".join(path), line=line)
            lines[path] = line
            lines.update(_key_lines(value_node, source, path))
    return lines


def read_yaml_with_lines(path: Path) -> tuple[Any, dict[tuple[str, ...], int]]:
    """Parse a YAML file; return its data and the line of every mapping key."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError("file not found", file=str(path)) from None
    except UnicodeDecodeError as exc:
        line = path.read_bytes()[:exc.start].count(b"\n") + 1
        raise ConfigError("not UTF-8 text: re-save the file as UTF-8", file=str(path),
                          line=line) from None
    return parse_yaml_with_lines(text, str(path))


def parse_yaml_with_lines(text: str, source: str) -> tuple[Any, dict[tuple[str, ...], int]]:
    """Parse YAML text (errors name `source`); return its data and every key's line."""
    try:
        data = yaml.safe_load(text)
        node = yaml.compose(text)
    except yaml.YAMLError as exc:
        message, line = yaml_problem(exc)
        raise ConfigError(message, file=source, line=line) from None
    return data, (_key_lines(node, source) if node is not None else {})


def load_yaml_layer(path: Path, *, extra_keys: tuple[str, ...] = (),
                    text: str | None = None) -> Layer:
    """Read a preset or project.yaml as a layer; `extra_keys` are allowed top-level keys
    that are not configuration (a project's premise, genre, ...). With `text`, that text
    is read as if it were the file (to check an edit before it is saved)."""
    data, lines = (read_yaml_with_lines(path) if text is None
                   else parse_yaml_with_lines(text, str(path)))
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError("expected a mapping at the top level", file=str(path), line=1)
    values: dict[str, dict[str, Any]] = {}
    for key, value in data.items():
        if key in extra_keys:
            continue
        if key not in SECTIONS:
            allowed = ", ".join(sorted([*SECTIONS, *extra_keys]))
            raise ConfigError(f"unknown key '{key}' (expected one of: {allowed})",
                              file=str(path), key=str(key), line=lines.get((str(key),)))
        if value is None:
            continue
        if not isinstance(value, dict):
            raise ConfigError(f"'{key}' must be a mapping of settings", file=str(path),
                              key=str(key), line=lines.get((str(key),)))
        values[key] = dict(value)
    return Layer(str(path), values, lines)


def _type_name(tp: Any) -> str:
    return getattr(tp, "__name__", str(tp))


def coerce_value(value: Any, tp: Any, *, where: str) -> Any:
    """Check (and gently coerce: int to float) one value against a field type."""
    origin = typing.get_origin(tp)
    if origin is dict:
        key_tp, item_tp = typing.get_args(tp)
        if not isinstance(value, dict):
            raise ValueError(f"{where} must be a mapping of {_type_name(item_tp)}, not {value!r}")
        return {coerce_value(k, key_tp, where=where): coerce_value(v, item_tp, where=f"{where}.{k}")
                for k, v in value.items()}
    if origin is list:
        (item_tp,) = typing.get_args(tp)
        if not isinstance(value, list):
            raise ValueError(f"{where} must be a list of {_type_name(item_tp)}, not {value!r}")
        return [coerce_value(v, item_tp, where=where) for v in value]
    if tp is bool:
        if isinstance(value, bool):
            return value
    elif tp is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    elif tp is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
    elif tp is str:
        if isinstance(value, str):
            return value
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return str(value)
    raise ValueError(f"{where} must be {_type_name(tp)}, not {value!r}")


# Keys that were renamed: what an old project.yaml is told.
RENAMED = {"llm.model_path": "now llm.local_model, which takes a path to a .gguf or a name"}


def _validate_section(section: str, values: Mapping[str, Any], layer: Layer) -> dict[str, Any]:
    cls = SECTIONS[section]
    hints = typing.get_type_hints(cls)
    out: dict[str, Any] = {}
    for key, value in values.items():
        dotted = f"{section}.{key}"
        if key not in hints:
            known = RENAMED.get(dotted) or f"known keys: {', '.join(hints)}"
            raise ConfigError(f"unknown key '{dotted}' ({known})",
                              file=layer.source, key=dotted, line=layer.line(section, key))
        if dotted == "audit.mode" and value is False:
            value = "off"        # YAML 1.1 reads a bare `off` as false
        if dotted == "llm.stages":
            out[key] = _validate_stages(value, layer)
            continue
        try:
            out[key] = coerce_value(value, hints[key], where=dotted)
        except ValueError as exc:
            raise ConfigError(str(exc), file=layer.source, key=dotted,
                              line=layer.line(section, key)) from None
    return out


def _validate_stages(value: Any, layer: Layer) -> dict[str, dict[str, Any]]:
    """Check `llm.stages`: known stages, each a mapping of STAGE_KEYS of llm's types."""
    hints = {**typing.get_type_hints(LLMConfig), "max_tokens": int, "window": int}
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ConfigError(f"llm.stages must be a mapping of stages ({', '.join(MODEL_STAGES)}), "
                          f"not {value!r}", file=layer.source, key="llm.stages",
                          line=layer.line("llm", "stages"))
    out: dict[str, dict[str, Any]] = {}
    for stage, keys in value.items():
        where = f"llm.stages.{stage}"
        line = layer.line("llm", "stages", str(stage))
        if stage not in MODEL_STAGES:
            raise ConfigError(f"unknown stage '{where}' (stages: {', '.join(MODEL_STAGES)})",
                              file=layer.source, key=where, line=line)
        if keys is None:
            continue
        if not isinstance(keys, dict):
            raise ConfigError(f"{where} must be a mapping of llm keys, not {keys!r}",
                              file=layer.source, key=where, line=line)
        out[stage] = {}
        for key, item in keys.items():
            dotted = f"{where}.{key}"
            line = layer.line("llm", "stages", str(stage), str(key))
            if key not in STAGE_KEYS:
                raise ConfigError(f"unknown key '{dotted}' (known keys: {', '.join(STAGE_KEYS)})",
                                  file=layer.source, key=dotted, line=line)
            try:
                out[stage][key] = coerce_value(item, hints[key], where=dotted)
            except ValueError as exc:
                raise ConfigError(str(exc), file=layer.source, key=dotted, line=line) from None
    return out


def _check_values(config: Config, origin: Mapping[str, tuple[str, int | None]]) -> None:
    """Range checks that need the merged values; the first problem is raised, pointing at
    the layer that set the value."""
    for dotted, message in chain(_llm_problems(config), _generation_problems(config.generation),
                                 _context_problems(config.context), _daemon_problems(config.daemon),
                                 _audit_problems(config.audit),
                                 _outline_problems(config.outline),
                                 _style_problems(config.style)):
        source, line = origin.get(dotted, ("built-in defaults", None))
        raise ConfigError(f"{dotted}: {message}", file=source, key=dotted, line=line)


Problems = Iterator[tuple[str, str]]   # (dotted key, what is wrong with its value)


def _llm_problems(config: Config) -> Problems:
    llm = config.llm
    for stage, own in llm.stages.items():      # first: a stage's max_tokens is its cap
        yield from _stage_problems(config, stage, own)
    if not is_provider(llm.provider):
        yield "llm.provider", f"must be one of {', '.join(provider_names())}, not {llm.provider!r}"
    for stage in STAGES:
        if config.max_tokens(stage) <= 0 or getattr(llm, f"{stage}_max_tokens") < 0:
            yield f"llm.{stage}_max_tokens", "must be positive" + (
                " (or 0: from generation.scene_max_words)" if stage == "writer" else "")
    if llm.local_context < 0:
        yield "llm.local_context", "must be 0 (the model's own) or a number of tokens"
    if llm.timeout <= 0:
        yield "llm.timeout", "must be positive"
    if llm.max_retries < 0:
        yield "llm.max_retries", "must be 0 or more"
    if llm.max_cost < 0:
        yield "llm.max_cost", "must be 0 (no ceiling) or a positive number of dollars"
    if problem := price_problem(llm.prices):
        yield "llm.prices", problem


def _stage_problems(config: Config, stage: str, own: Mapping[str, Any]) -> Problems:
    """The problems of the values llm.stages.<stage> sets, named by its keys."""
    where = f"llm.stages.{stage}"
    if own.get("max_tokens", 1) <= 0:
        yield f"{where}.max_tokens", "must be positive"
    if own.get("window", 0) < 0:
        yield f"{where}.window", "must be 0 (from the model table) or positive"
    for dotted, message in _llm_problems(config.for_stage(stage)):
        key = dotted.removeprefix("llm.")
        if key in own:
            yield f"{where}.{key}", message


def _generation_problems(gen: GenerationConfig) -> Problems:
    for key in ("max_tools_per_tick", "recent_scenes_count", "full_text_scenes_count",
                "summary_scenes_count"):
        if getattr(gen, key) < 0:
            yield f"generation.{key}", "must be 0 or more"
    if gen.checkpoint_summary_interval < 1:
        yield "generation.checkpoint_summary_interval", "must be at least 1"
    if not 0 < gen.scene_min_words <= gen.scene_max_words:
        yield "generation.scene_min_words", "must be positive and at most scene_max_words"
    if gen.loop_overdue_after < 1:
        yield "generation.loop_overdue_after", "must be at least 1"


def _context_problems(ctx: ContextConfig) -> Problems:
    thresholds = ctx.compaction_thresholds
    if len(thresholds) != 3 or sorted(thresholds) != thresholds or not all(0 < t <= 1 for t in thresholds):
        yield "context.compaction_thresholds", "must be three rising shares between 0 and 1"
    if not 0 < ctx.target_fill <= 1:
        yield "context.target_fill", "must be a share of the budget above 0, at most 1"
    for key in ("tier3_share", "cast_share", "retrieved_share", "tier2_share", "tier1_share",
                "style_share", "low_water", "summary_min_coverage"):
        if not 0 <= getattr(ctx, key) <= 1:
            yield f"context.{key}", "must be a share between 0 and 1"
    if ctx.tier3_share + ctx.cast_share + ctx.retrieved_share + ctx.tier2_share + ctx.tier1_share \
            + ctx.style_share > 1:
        yield "context.tier1_share", "the tier shares add up to more than the whole budget"
    yield from _share_problems(ctx)
    if ctx.keep_prompt_logs < 1:
        yield "context.keep_prompt_logs", "must be at least 1 (the next tick reads the last)"
    if ctx.prompt_log_ticks < ctx.keep_prompt_logs:
        yield "context.prompt_log_ticks", "must be at least context.keep_prompt_logs"
    if ctx.max_full_text_scenes < 1:
        yield "context.max_full_text_scenes", "must be at least 1"
    if ctx.full_text not in FULL_TEXT:
        yield "context.full_text", f"must be one of {', '.join(FULL_TEXT)}, not {ctx.full_text!r}"
    if ctx.window < 0 or ctx.max_prompt_tokens <= 0:
        yield "context.window", "must be 0 (from the model table) or positive"


def _share_problems(ctx: ContextConfig) -> Problems:
    for key, defaults in SHARE_KEYS.items():
        shares = getattr(ctx, key)
        if unknown := sorted(set(shares) - set(defaults)):
            yield f"context.{key}", f"unknown section '{unknown[0]}' (sections: {', '.join(defaults)})"
        if not all(0 <= v <= 1 for v in shares.values()) or sum(shares.values()) > 1:
            yield f"context.{key}", "must be shares between 0 and 1 adding up to at most 1"
    if unknown := sorted(set(ctx.relevance) - set(RELEVANCE)):
        yield "context.relevance", f"unknown signal '{unknown[0]}' (signals: {', '.join(RELEVANCE)})"
    if any(v < 0 for v in ctx.relevance.values()):
        yield "context.relevance", "weights must be 0 or more"
    if problem := embeddings_problem(ctx.embeddings):
        yield "context.embeddings", problem


def _daemon_problems(daemon: DaemonConfig) -> Problems:
    try:
        interval_seconds(daemon.interval)
    except ValueError as exc:
        yield "daemon.interval", str(exc)
    for key in ("max_ticks", "stop_at_words", "failure_backoff"):
        if getattr(daemon, key) < 0:
            yield f"daemon.{key}", "must be 0 or more"
    if daemon.max_failures < 1:
        yield "daemon.max_failures", "must be at least 1"


def _audit_problems(audit: AuditConfig) -> Problems:
    if audit.mode not in AUDIT_MODES:
        yield "audit.mode", f"must be one of {', '.join(AUDIT_MODES)}, not {audit.mode!r}"
    if audit.act_on not in SEVERITIES:
        yield "audit.act_on", f"must be one of {', '.join(SEVERITIES)}, not {audit.act_on!r}"
    if audit.loop_overdue < 0:
        yield "audit.loop_overdue", "must be 0 or more"
    if audit.repeat_window < 0:
        yield "audit.repeat_window", "must be 0 or more"
    if not 0 < audit.repeat_threshold <= 1:
        yield "audit.repeat_threshold", "must be a share above 0 and at most 1"
    if audit.max_tokens < 1:
        yield "audit.max_tokens", "must be positive"


def _outline_problems(outline: OutlineConfig) -> Problems:
    if outline.curve not in CURVES:
        yield "outline.curve", f"must be one of {', '.join(CURVES)}, not {outline.curve!r}"
    if outline.acts < 1:
        yield "outline.acts", "must be at least 1"
    if 0 < outline.chapters < outline.acts:
        yield "outline.chapters", "must be 0 (auto) or at least outline.acts (a chapter an act)"
    for key in ("chapters", "beats_per_chapter", "scenes_per_chapter"):
        if getattr(outline, key) < 0:
            yield f"outline.{key}", "must be 0 (auto) or more"
    if outline.revise not in REVISE_MODES:
        yield "outline.revise", f"must be one of {', '.join(REVISE_MODES)}, not {outline.revise!r}"
    if outline.revise_every < 1:
        yield "outline.revise_every", "must be at least 1 (a checkpoint every N chapters)"


def _style_problems(style: StyleConfig) -> Problems:
    if style.max_phrase_uses < 0:
        yield "style.max_phrase_uses", "must be 0 or more"
    if style.recent_scenes < 0:
        yield "style.recent_scenes", "must be 0 or more"
    if style.rewrite not in REWRITES:
        yield "style.rewrite", f"must be one of {', '.join(REWRITES)}, not {style.rewrite!r}"


def embeddings_problem(raw: Mapping[str, str]) -> str:
    """What is wrong with a `context.embeddings` mapping ("" when nothing is)."""
    unknown = [k for k in raw if k not in EMBEDDING_KEYS]
    if unknown:
        return f"unknown key '{unknown[0]}' (expected {', '.join(EMBEDDING_KEYS)})"
    batch = str(raw.get("batch_size", "64"))
    if not batch.isdigit() or not 1 <= int(batch) <= 2048:
        return f"batch_size must be a whole number from 1 to 2048, not {batch!r}"
    return ""


def price_problem(prices: Mapping[str, float]) -> str:
    """What is wrong with an `llm.prices` mapping ("" when nothing is, or it is empty)."""
    if not prices:
        return ""
    unknown = [k for k in prices if k not in ("input", "cached_input", "output", "cache_write")]
    if unknown:
        return f"unknown key '{unknown[0]}' (expected input, cached_input, output, cache_write)"
    if "input" not in prices or "output" not in prices:
        return ("needs input and output (dollars per million tokens; cached_input and "
                "cache_write optional)")
    negative = [k for k, v in prices.items() if v < 0]
    return f"'{negative[0]}' must be 0 or more" if negative else ""


def merge_layers(layers: list[Layer], *, preset: str = "balanced") -> Config:
    """Apply layers in order over the built-in defaults and validate the result."""
    merged: dict[str, dict[str, Any]] = {name: {} for name in SECTIONS}
    origin: dict[str, tuple[str, int | None]] = {}
    for layer in layers:
        for section, values in layer.values.items():
            if section not in SECTIONS:
                raise ConfigError(f"unknown section '{section}'", file=layer.source, key=section,
                                  line=layer.line(section))
            checked = _validate_section(section, values, layer)
            for key, value in checked.items():   # a mapping overrides key by key
                if key in MAPPING_KEYS:
                    checked[key] = {**MAPPING_KEYS[key], **merged[section].get(key, {}), **value}
                elif key == "embeddings":
                    checked[key] = {**merged[section].get(key, {}), **value}
                elif key == "stages" and section == "llm":
                    before = merged[section].get(key, {})
                    checked[key] = {stage: {**before.get(stage, {}), **value.get(stage, {})}
                                    for stage in MODEL_STAGES if stage in before or stage in value}
            merged[section].update(checked)
            origin.update(_origins(layer, section, values))
    config = Config(
        llm=LLMConfig(**merged["llm"]),
        generation=GenerationConfig(**merged["generation"]),
        context=ContextConfig(**merged["context"]),
        daemon=DaemonConfig(**merged["daemon"]),
        audit=AuditConfig(**merged["audit"]),
        outline=OutlineConfig(**merged["outline"]),
        style=StyleConfig(**merged["style"]),
        preset=preset,
    )
    _check_values(config, origin)
    return config


def env_layer(env: Mapping[str, str]) -> Layer:
    """Settings from variables named NOVEL_<SECTION>_<KEY>, e.g. NOVEL_LLM_MODEL."""
    values: dict[str, dict[str, Any]] = {}
    for section, cls in SECTIONS.items():
        for f in dataclasses.fields(cls):
            name = f"NOVEL_{section}_{f.name}".upper()
            if name in env:
                raw = env[name]
                try:
                    value = yaml.safe_load(raw) if raw.strip() else ""
                except yaml.YAMLError:
                    value = raw
                if f.type in ("str", str) and not isinstance(value, str):
                    value = raw
                values.setdefault(section, {})[f.name] = value
    return Layer("environment", values)


def flags_layer(flags: Mapping[str, Any]) -> Layer:
    """Settings from command-line flags, given as {"llm.model": "gpt-4o", ...}."""
    values: dict[str, dict[str, Any]] = {}
    for dotted, value in flags.items():
        if value is None:
            continue
        section, _, key = dotted.partition(".")
        values.setdefault(section, {})[key] = value
    return Layer("command line", values)


PRESET_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")


def check_preset_name(name: str) -> str:
    """A preset is named, never pathed: letters, digits, '-' and '_' (not 'models')."""
    if not PRESET_NAME.match(name or "") or name == "models":
        raise ConfigError(f"'{name}' is not a preset name (use letters, digits, '-' or '_'; "
                          "a name, not a file or a path)", key="preset")
    return name


def preset_path(name: str, directory: Path | None = None) -> Path:
    """The file of a named preset in `directory` (default: the built-in configs/)."""
    return (directory or config_dir()) / f"{check_preset_name(name)}.yaml"


def list_presets(directory: Path | None = None) -> list[str]:
    """Names of the presets in a folder (default: the built-in configs/; every YAML there
    with a preset's name, models.yaml aside)."""
    d = directory or config_dir()
    return sorted(p.stem for p in d.glob("*.yaml") if PRESET_NAME.match(p.stem)
                  and p.stem != "models") if d.is_dir() else []


def user_presets_dir(env: Mapping[str, str], projects_folder: Path) -> Path:
    """Where the user's own presets live: $NOVEL_PRESETS_DIR, else `presets/` in the
    folder that holds the projects."""
    configured = env.get("NOVEL_PRESETS_DIR")
    return Path(configured).expanduser() if configured else Path(projects_folder) / "presets"


def find_preset(name: str, directory: Path | None = None, user_dir: Path | None = None) -> Path:
    """The file of preset `name`: built in first, then the user's presets folder."""
    for folder in (directory or config_dir(), user_dir):
        if folder is not None and preset_path(name, folder).is_file():
            return preset_path(name, folder)
    names = ", ".join(sorted({*list_presets(directory), *list_presets(user_dir)})) or "none"
    raise ConfigError(f"unknown preset '{name}' (available: {names})", key="preset")


def load_preset(name: str, directory: Path | None = None, user_dir: Path | None = None) -> Layer:
    """Read a preset as a layer; an unknown name lists the ones there are."""
    return load_yaml_layer(find_preset(name, directory, user_dir))


def config_layers(project_layer: Layer | None = None, *, preset: str | None = None,
                  env: Mapping[str, str] | None = None, flags: Mapping[str, Any] | None = None,
                  preset_dir: Path | None = None, user_presets: Path | None = None
                  ) -> tuple[str, list[Layer]]:
    """The preset's name and every layer in order: preset, project, environment, flags."""
    name = preset or "balanced"
    layers = [load_preset(name, preset_dir, user_presets)]
    if project_layer is not None:
        layers.append(project_layer)
    layers.append(env_layer(env or {}))
    layers.append(flags_layer(flags or {}))
    return name, layers


def load_config(project_layer: Layer | None = None, *, preset: str | None = None,
                env: Mapping[str, str] | None = None, flags: Mapping[str, Any] | None = None,
                preset_dir: Path | None = None, user_presets: Path | None = None) -> Config:
    """Build a Config from every layer. `preset` defaults to balanced."""
    name, layers = config_layers(project_layer, preset=preset, env=env, flags=flags,
                                 preset_dir=preset_dir, user_presets=user_presets)
    return merge_layers(layers, preset=name)


def sources(layers: list[Layer]) -> dict[str, tuple[str, int | None]]:
    """Which layer set each dotted key last, with its line: what `config show --sources`
    prints (keys no layer sets come from the built-in defaults); a key of llm.stages is
    named whole (llm.stages.writer.model)."""
    origin: dict[str, tuple[str, int | None]] = {}
    for layer in layers:
        for section, values in layer.values.items():
            origin.update(_origins(layer, section, values))
    return origin


def _origins(layer: Layer, section: str, values: Mapping[str, Any]
             ) -> dict[str, tuple[str, int | None]]:
    """Where each of a layer's `values` of `section` came from (llm.stages key by key)."""
    origin = {f"{section}.{key}": (layer.source, layer.line(section, key)) for key in values}
    stages = values.get("stages") if section == "llm" else None
    if isinstance(stages, dict):
        for stage, keys in stages.items():
            for key in keys if isinstance(keys, dict) else ():
                origin[f"llm.stages.{stage}.{key}"] = (
                    layer.source, layer.line("llm", "stages", str(stage), str(key)))
    return origin
