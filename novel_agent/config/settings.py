"""The settings, declared once: each key's type, bounds, default and meaning (its `Field`).

A section (llm, generation, context, daemon, audit, outline, style) is a frozen pydantic
model: strict types (no "3" for an int; an int is fine for a float), finite floats (NaN
and infinity refused in any float: `allow_inf_nan=False`), unknown keys refused, a rule
across keys a model validator raising `Clash`. `Config` holds them and says what a stage
uses (`for_stage`, `max_tokens`). The reference is made from these declarations
(config/reference.py); the layers are read and merged by config/layers.py.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal, NamedTuple, get_args

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    FiniteFloat,
    ValidationInfo,
    field_serializer,
    field_validator,
    model_validator,
)

from novel_agent.config.stages import model_of, spec
from novel_agent.config.values import (
    MERGED,
    OFF,
    Auto,
    Clash,
    Fill,
    Prices,
    Provider,
    Seconds,
    Share,
    StageName,
    Thresholds,
)

# The keys that belong to llm's provider: a stage on another provider does not take them
# from llm (gpt-4o is no Anthropic model, an OpenAI server's URL no Anthropic endpoint, its
# prices not theirs); left out, they are that provider's defaults.
PROVIDER_KEYS = ("model", "base_url", "api_key_env", "prices")
# The longest wait for a model (llm.timeout): a day. A socket takes no timeout past
# ~10^9 s (time_t), a lock none past threading.TIMEOUT_MAX: 1e10 was a traceback.
MAX_TIMEOUT = 86_400
# The writer's output cap per word of generation.scene_max_words: English prose runs
# ~1.3 tokens a word (cl100k, Qwen's and SmolLM2's tokenizers alike); the rest is room
# to finish the last sentence. 400 words -> 700 tokens.
WRITER_TOKENS_PER_WORD = 1.75
Curve = Literal["three_act", "five_act", "rising", "serial"]    # story/curves.py draws each
CURVES: tuple[str, ...] = get_args(Curve)


class Section(BaseModel):
    """A part of the settings: frozen, strict, its unknown keys refused."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True, allow_inf_nan=False)


class ModelKeys(Section):
    """The keys of one model: llm's, and any stage's of its own (`llm.stages.<stage>`)."""

    provider: Provider = Field("auto", description=(
        "openai, anthropic, llm (any model of the llm library), local, offline, or auto: local if its "
        "model file is installed, else offline"))
    model: str = Field("", description=(
        "\"\" = the provider's default model; llm: an id or alias of `llm models`"))
    base_url: str = Field("", description=(
        "openai: any OpenAI-compatible endpoint; anthropic: \"\" = api.anthropic.com"))
    api_key_env: str = Field("OPENAI_API_KEY", description=(
        "the NAME of the variable; keys never live in files (anthropic: ANTHROPIC_API_KEY unless set; "
        "llm: not used, the key is the one llm finds: `llm keys set`, or the model's variable)"))
    local_model: str = Field("auto", description=(
        "local provider: smollm2-135m | qwen2.5-coder-1.5b | auto (the best installed) | a .gguf path"))
    local_context: int = Field(0, ge=0, description="local provider: llama.cpp's n_ctx; 0 = the model's")
    timeout: FiniteFloat = Field(120.0, gt=0, le=MAX_TIMEOUT, description=(
        "seconds, at most 86,400 (a day); local: without a token (an idle timeout)"))
    max_retries: int = Field(3, ge=0, description=(
        "tries again after a 408, 409, 429, 529 or 5xx, a timeout or a lost connection, backing "
        "off (a server's Retry-After waited in full, up to 600 s)"))
    temperature: FiniteFloat = Field(0.8, ge=0, le=2, description=(
        "the model's sampling temperature, 0 to 2"))
    prices: Prices = Field(default_factory=dict, description=(
        "Dollars per million tokens {input, cached_input, output, cache_write?}; {} = "
        "configs/models.yaml's."))


class StageOverrides(ModelKeys):
    """What `llm.stages.<stage>` sets: any key of one model, its answer's cap and its
    model's window; a key the stage leaves out is llm's (LLMConfig.stage_keys: those it sets)."""

    model_config = ConfigDict(title="llm keys")

    max_tokens: int | None = Field(None, gt=0, description=(
        "its answer's cap (before the setting its stage's cap comes from)"))
    window: int | None = Field(None, ge=0, description=(
        "its model's window (context.window for this stage); 0 = its own"))


class LLMConfig(ModelKeys):
    """Which model answers, and how."""

    seed: int = Field(0, description="the model's seed (the offline model's story too)")
    planner_max_tokens: int = Field(600, gt=0, description="the planner's answer, at most")
    writer_max_tokens: int = Field(0, ge=0, description=(
        f"0 = WRITER_TOKENS_PER_WORD ({WRITER_TOKENS_PER_WORD}) x generation.scene_max_words"))
    extractor_max_tokens: int = Field(800, gt=0, description="the extractor's answer, at most")
    summarizer_max_tokens: int = Field(400, gt=0, description="a summary, at most")
    max_cost: FiniteFloat = Field(0.0, ge=0, description=(
        "dollars this project may spend in all; 0 = no ceiling"))
    stages: Annotated[dict[StageName, StageOverrides], MERGED] = Field(
        default_factory=dict, description=(
            "A model per stage: {stage: {key: value}}, each stage (one with a model of its own) "
            "setting any key of one model, max_tokens (its answer's cap) and window (its model's); a "
            "key it leaves out is llm's. Merged key by key."))

    @field_serializer("stages")
    def _given(self, stages: dict[str, StageOverrides]) -> dict[str, dict[str, Any]]:
        return {stage: keys.model_dump(exclude_unset=True) for stage, keys in stages.items()}

    def stage_keys(self, stage: str) -> dict[str, Any]:
        """The keys `llm.stages.<stage>` sets ({} when it sets none)."""
        own = self.stages.get(stage)
        return own.model_dump(exclude_unset=True) if own is not None else {}


class GenerationConfig(Section):
    """What a tick produces and what it looks back on."""

    max_tools_per_tick: int = Field(3, ge=0, description="memory changes the planner may make a tick")
    recent_scenes_count: int = Field(3, ge=0, description="scene summaries the planner sees")
    full_text_scenes_count: int = Field(2, ge=0, description=(
        "the writer's last scenes in full text (typical length)"))
    summary_scenes_count: int = Field(3, ge=0, description=(
        "the writer's recent scene summaries (typical length)"))
    checkpoint_summary_interval: int = Field(10, ge=1, description="ticks between checkpoint summaries")
    include_overall_summary: bool = Field(True, description="the planner sees the story so far")
    enable_fact_extraction: bool = Field(True, description="the extractor's facts go to memory")
    enable_entity_updates: bool = Field(True, description=(
        "its characters, loops, relationships, standing too"))
    scene_min_words: int = Field(200, gt=0, description=(
        "a scene under this is a notice (and doctor's problem at half)"))
    scene_max_words: int = Field(400, gt=0, description="the writer is asked for this at most, and cut there")
    loop_overdue_after: int = Field(30, ge=1, description=(
        "a loop open longer than this many ticks is overdue"))

    @model_validator(mode="after")
    def _words(self) -> GenerationConfig:
        if self.scene_min_words > self.scene_max_words:
            raise Clash(scene_min_words="must be at most generation.scene_max_words "
                                        f"({self.scene_max_words})",
                        scene_max_words="must be at least generation.scene_min_words "
                                        f"({self.scene_min_words})")
        return self


class Embeddings(Section):
    """Optional embeddings, a second relevance signal (an OpenAI-compatible /embeddings)."""

    model_config = ConfigDict(title="embedding keys")

    model: str = Field("", description="the embedding model; \"\" = no embeddings")
    base_url: str = Field("", description="its endpoint; \"\" = llm.base_url")
    api_key_env: str = Field("", description="the variable of its key; \"\" = llm.api_key_env")
    batch_size: int = Field(64, ge=1, le=2048, description="texts embedded a request")


TIERS = ("tier3_share", "cast_share", "retrieved_share", "tier2_share", "tier1_share", "style_share")


class ContextConfig(Section):
    """How prompts are packed into the model's window."""

    window: int = Field(0, ge=0, description=(
        "0 = its own (embedded; llama.cpp's /props), else configs/models.yaml"))
    max_prompt_tokens: int = Field(32000, gt=0, description="a cap below the window, for cost")
    margin: int = Field(256, ge=0, description="tokens kept free below the window, for counting slack")
    encoding: str = Field("", description="\"\" = chosen by model name")
    compaction_thresholds: Thresholds = Field(default_factory=lambda: [0.50, 0.65, 0.80], description=(
        "Usage shares of the recent tiers and tier 3 that raise compaction to level 1, 2, 3."))
    target_fill: Fill = Field(0.80, description=(
        "How full a prompt may be filled with relevant memory (the thresholds above steer only the "
        "recent tiers' compaction): room under it flows to what is waiting."))
    tier3_share: Share = Field(0.12, description=(
        "the writer's share for tier 3, the arc and checkpoint summaries, the story so far (each tier "
        "fills its share of the writer's budget before compaction starts)"))
    cast_share: Share = Field(0.06, description="the writer's share for the cast: POV, place, people, lore")
    retrieved_share: Share = Field(0.05, description=(
        "the writer's share for older scenes chosen by relevance"))
    tier2_share: Share = Field(0.08, description="the writer's share for tier 2, the recent scene summaries")
    tier1_share: Share = Field(0.20, description=(
        "the writer's share for tier 1, the last scenes in full text"))
    style_share: Share = Field(0.03, description=(
        "The writer's share for the book's style (style.yaml): its lines always, its sample passage "
        "whole, or its first sentences, within this; 0 = no style told."))
    max_full_text_scenes: int = Field(10, ge=1, description="tier 1 never holds more scenes than this")
    full_text: Literal["auto", "scenes", "ending"] = Field("auto", description=(
        "What tier 1 shows the writer: \"scenes\", the last scenes whole; \"ending\", the newest "
        "scene's last paragraphs only, the scenes before it as summaries (a small model shown whole "
        "scenes writes them again); \"auto\": ending on an embedded local model."))
    low_water: Share = Field(0.5, description="after a compaction a tier refills from this share of its cap")
    summary_min_coverage: Share = Field(0.8, description="a summary naming less of its range is asked again")
    planner_shares: Annotated[dict[str, Share], MERGED] = Field(default_factory=lambda: {
        "overall": 0.08, "loops": 0.10, "characters": 0.08, "recent": 0.20,
        "relationships": 0.05, "locations": 0.03, "now": 0.04, "facts": 0.05, "lore": 0.04},
        description=(
        "Shares of the other stages' budgets for their memory sections, filled item by item (best "
        "first); what a section leaves unused flows to the next (in this order). Merged key by key."))
    extractor_shares: Annotated[dict[str, Share], MERGED] = Field(default_factory=lambda: {
        "plan": 0.04, "loops": 0.08, "characters": 0.04}, description=(
        "the extractor's: merged key by key"))
    summarizer_shares: Annotated[dict[str, Share], MERGED] = Field(default_factory=lambda: {
        "scenes": 0.75, "previous": 0.15}, description="the summarizer's: merged key by key")
    keep_prompt_logs: int = Field(50, ge=1, description=(
        "ticks whose prompt logs keep the messages sent (the next tick reads the last)"))
    prompt_log_ticks: int = Field(200, ge=1, description=(
        "ticks whose prompt logs are kept at all (a total cap)"))
    # context/retrieval.py says what each signal measures
    relevance: Annotated[dict[str, Annotated[FiniteFloat, Field(ge=0)]], MERGED] = Field(
        default_factory=lambda: {"bm25": 3.0, "pov": 1.0, "character": 2.0, "location": 2.0,
                                 "loop": 2.0, "recency": 0.5, "pin": 5.0, "embedding": 3.0},
        description=(
        "Weights of retrieval's signals (older scenes and facts for the writer, facts for the "
        "planner); merged key by key."))
    embeddings: Annotated[Embeddings, MERGED] = Field(Embeddings(), description=(
        "Optional embeddings (an OpenAI-compatible /embeddings), off unless model is set; merged key "
        "by key."))

    @field_validator("planner_shares", "extractor_shares", "summarizer_shares", "relevance")
    @classmethod
    def _known(cls, value: dict[str, float], info: ValidationInfo) -> dict[str, float]:
        name = info.field_name or ""
        known = cls.model_fields[name].get_default(call_default_factory=True)
        noun = "signal" if name == "relevance" else "section"
        if unknown := sorted(set(value) - set(known)):
            raise ValueError(f"unknown {noun} '{unknown[0]}' ({noun}s: {', '.join(known)})")
        if noun == "section" and sum(value.values()) > 1:
            raise ValueError("must be shares between 0 and 1 adding up to at most 1")
        return value

    @model_validator(mode="after")
    def _together(self) -> ContextConfig:
        total = sum(getattr(self, key) for key in TIERS)
        if total > 1:
            said = f"the tier shares add up to {total:g}, more than the whole budget"
            raise Clash(**dict.fromkeys(TIERS, said))
        if self.prompt_log_ticks < self.keep_prompt_logs:
            raise Clash(prompt_log_ticks="must be at least context.keep_prompt_logs "
                                         f"({self.keep_prompt_logs})",
                        keep_prompt_logs="must be at most context.prompt_log_ticks "
                                         f"({self.prompt_log_ticks})")
        return self


class DaemonConfig(Section):
    """How `novel run` paces itself: the defaults of its flags."""

    interval: Seconds = Field(0.0, description="seconds between ticks (--interval), 0 to 604,800 (a week)")
    max_ticks: int = Field(0, ge=0, description="ticks per run, 0 = no limit (--ticks)")
    stop_at_words: int = Field(0, ge=0, description="stop once the book holds this many words, 0 = never")
    max_failures: int = Field(5, ge=1, description="failed ticks in a row before the daemon gives up")
    failure_backoff: FiniteFloat = Field(5.0, ge=0, description=(
        "seconds before the first retry; doubles per failure"))


class AuditConfig(Section):
    """The continuity audit between write and commit (audit/policy.py says what each mode does)."""

    mode: Annotated[Literal["off", "report", "revise", "hold"], OFF] = Field(
        "report", description="off | report | revise | hold")
    llm: bool = Field(False, description="also ask the auditor stage (an LLM call per tick)")
    act_on: Literal["minor", "major", "critical"] = Field("major", description=(
        "the least severity revise and hold act on"))
    loop_overdue: int = Field(0, ge=0, description=(
        "ticks a loop may go unmentioned; 0 = generation.loop_overdue_after"))
    repeat_window: int = Field(5, ge=0, description=(
        "the last K scenes a passage, title or opening is compared with"))
    repeat_threshold: Fill = Field(0.5, description="Jaccard of 5-word shingles at which a paragraph repeats")
    max_tokens: int = Field(600, gt=0, description="the auditor's answer")


class OutlineSizes(NamedTuple):
    """How big `novel outline` makes an outline: acts, chapters in all, beats per chapter,
    and each chapter's target length in scenes."""

    acts: int
    chapters: int
    beats: int
    scenes: int


# The sizes an outline is made at when its keys are 0: (a served model's, an embedded
# local model's). A 1.5B keeps a short story whole: 3 acts, a chapter each, 6 beats, 6 scenes
# (at most 9 with each chapter's stretch; 4 chapters of 2 scenes ran to 12, past a short story).
OUTLINE_AUTO = {"chapters": (24, 3), "beats_per_chapter": (3, 2), "scenes_per_chapter": (4, 2)}


class OutlineConfig(Section):
    """The book's outline (`novel outline`): the tension curve its beats follow, and its sizes."""

    curve: Curve = Field("three_act", description=(
        "The target tension (0-10) of each beat and scene, by where it falls in the book: three_act | "
        "five_act | rising | serial (a beat the model gives none takes it)."))
    acts: int = Field(3, ge=1, description="acts (or parts) `novel outline` makes")
    chapters: Auto = Field(0, description="chapters in all; 0 = 24, or 3 on an embedded local model")
    beats_per_chapter: Auto = Field(0, description=(
        "beats of each chapter; 0 = 3, or 2 on an embedded local model"))
    scenes_per_chapter: Auto = Field(0, description=(
        "A chapter's target length in scenes; 0 = 4, or 2 on an embedded local model."))
    revise: Annotated[Literal["auto", "off"], OFF] = Field("auto", description=(
        "At a checkpoint (a chapter closes) where the story has drifted from the outline (beats missed "
        "or landed out of order, new threads no beat covers), one call to the planner's model revises "
        "the rest of it, locked parts kept: auto | off."))
    revise_every: int = Field(1, ge=1, description="a checkpoint every N chapters the book closes")

    @model_validator(mode="after")
    def _a_chapter_an_act(self) -> OutlineConfig:
        if 0 < self.chapters < self.acts:
            raise Clash(chapters="must be 0 (auto) or at least outline.acts (a chapter an act)",
                        acts=f"must be at most outline.chapters ({self.chapters}), a chapter an act")
        return self

    def sizes(self, small: bool) -> OutlineSizes:
        """The sizes to make an outline at (`small`: for an embedded local model), the keys
        left at 0 taken from OUTLINE_AUTO; never fewer chapters than acts."""
        def size(key: str) -> int:
            return int(getattr(self, key) or OUTLINE_AUTO[key][small])
        return OutlineSizes(self.acts, max(self.acts, size("chapters")),
                            size("beats_per_chapter"), size("scenes_per_chapter"))


class StyleConfig(Section):
    """The prose held to the book's style (style.yaml) and kept from overused phrases."""

    max_phrase_uses: int = Field(0, ge=0, description=(
        "How many times one phrase of the slop list (the built-in one and style.yaml's avoid) may be "
        "used in any `style.recent_scenes` scenes running (0: a stock phrase is never wanted): the "
        "writer is told the phrases the last scenes used, and a scene that goes over is a notice (and "
        "its sentence written again: style.rewrite)."))
    recent_scenes: int = Field(10, ge=0, description=(
        "the scenes before this one the phrases are counted over"))
    rewrite: Annotated[Literal["local", "always", "off"], OFF] = Field("local", description=(
        "Where a scene is mended: one whose person or tense is not style.yaml's is written again once "
        "and the better of the two kept; each sentence with a phrase over max_phrase_uses, or five "
        "words an earlier scene said, is written again on its own. local (on an embedded local model), "
        "always, or off (a notice only)."))


class Config(Section):
    """The merged configuration of one project."""

    llm: LLMConfig = LLMConfig()
    generation: GenerationConfig = GenerationConfig()
    context: ContextConfig = ContextConfig()
    daemon: DaemonConfig = DaemonConfig()
    audit: AuditConfig = AuditConfig()
    outline: OutlineConfig = OutlineConfig()
    style: StyleConfig = StyleConfig()
    preset: str = "balanced"

    def max_tokens(self, stage: str) -> int:
        """The cap of a stage's answer: llm.stages.<stage>.max_tokens, else the setting its
        StageSpec.cap_key names (the writer's 0: WRITER_TOKENS_PER_WORD x
        generation.scene_max_words), else the spec's own max_tokens."""
        own, found = self.llm.stage_keys(stage).get("max_tokens"), spec(stage)
        if own is not None:
            return int(own)
        if found is None:
            raise ValueError(f"no stage '{stage}' is declared (config/stages.py)")
        if not found.cap_key:
            return found.max_tokens
        section, _, key = found.cap_key.partition(".")
        cap = int(getattr(getattr(self, section), key))    # only the writer's may be 0
        return cap or math.ceil(self.generation.scene_max_words * WRITER_TOKENS_PER_WORD)

    def other_provider(self, stage: str) -> bool:
        """Whether llm.stages.<stage> sets a provider other than llm's (`auto` with a
        base_url is openai's): its PROVIDER_KEYS then are not llm's."""
        own, named = self.llm.stage_keys(model_of(stage)), self.llm.provider
        if named == "auto" and self.llm.base_url:
            named = "openai"
        return "provider" in own and own["provider"] != named

    def for_stage(self, stage: str) -> Config:
        """The configuration `stage`'s model is built from: llm with the keys llm.stages.<stage>
        sets (context.window too, from its `window`), no stages of its own. A stage on another
        provider than llm's takes none of llm's PROVIDER_KEYS; one on a server of its own sends
        no key unless it names its own api_key_env; one with no model of its own (config/stages.py)
        asks for the one it borrows."""
        if not self.llm.stages:
            return self
        own = self.llm.stage_keys(model_of(stage))
        values = {k: v for k, v in own.items() if k not in ("max_tokens", "window")}
        if self.other_provider(stage):
            fresh = {k: LLMConfig.model_fields[k].get_default(call_default_factory=True)
                     for k in PROVIDER_KEYS}
            values = {**fresh, **values}
        if own.get("base_url", self.llm.base_url) != self.llm.base_url \
                and "api_key_env" not in own:
            values["api_key_env"] = ""      # llm's key is for llm's server: none is sent
        update: dict[str, Any] = {"llm": self.llm.model_copy(update={"stages": {}, **values})}
        if "window" in own:
            update["context"] = self.context.model_copy(update={"window": own["window"]})
        return self.model_copy(update=update)

    def to_dict(self) -> dict[str, Any]:
        """A plain nested dict, for `novel config show` and reports."""
        return self.model_dump()


SECTIONS: dict[str, type[Section]] = {
    name: info.annotation for name, info in Config.model_fields.items()
    if isinstance(info.annotation, type) and issubclass(info.annotation, Section)}
