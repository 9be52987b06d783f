"""Prompts: sandboxed Jinja2 templates, one per stage, overridable per project.

A template renders the user message; a `{% set system %}...{% endset %}` block
in it is the system message. A project overrides a template by putting a file of
the same name in its `templates/` folder.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jinja2
from jinja2.exceptions import SecurityError
from jinja2.loaders import split_template_path
from jinja2.sandbox import SandboxedEnvironment

from novel_agent.config.stages import spec
from novel_agent.context import Context, Section
from novel_agent.context.auditor import AUDITOR_LAYOUT
from novel_agent.context.builders import EXTRACTOR_LAYOUT, PLANNER_LAYOUT, SUMMARIZER_LAYOUT
from novel_agent.context.outline_briefing import OUTLINE_LAYOUT
from novel_agent.context.writer import WRITER_ORDER
from novel_agent.errors import ConfigError
from novel_agent.files import read_text
from novel_agent.paths import TEMPLATES_DIR

MAX_OUTPUT = 2_000_000      # characters a template may render
MAX_SECONDS = 5.0           # time a template may take to render
MAX_ITEMS = 100_000         # a sequence or string a template may build with * or range()


class BoundedEnvironment(SandboxedEnvironment):
    """The sandbox, with `*` and `**` bounded too (`"x" * 10**9` is refused)."""

    intercepted_binops = frozenset(["*", "**"])

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        if operator == "**" and isinstance(right, int) and abs(right) > 64:
            raise SecurityError(f"exponent {right} is too large for a template")
        if operator == "*" and any(isinstance(x, (str, list, tuple)) for x in (left, right)):
            size = (len(left) if isinstance(left, (str, list, tuple)) else left) * (
                len(right) if isinstance(right, (str, list, tuple)) else right)
            if isinstance(size, int) and size > MAX_ITEMS * 10:
                raise SecurityError(f"a repetition of {size:,} items is too large for a template")
        return super().call_binop(context, operator, left, right)


_ENVIRONMENTS: dict[tuple, SandboxedEnvironment] = {}
KEPT_ENVIRONMENTS = 8


def environment(project_templates: Path | None = None, *,
                undefined: type = jinja2.StrictUndefined) -> SandboxedEnvironment:
    """A sandboxed environment that looks in the project's templates first. One is kept
    per set of template files (names and mtimes), so a template is compiled once, not
    at every prompt, and an override added, edited or removed is seen at once."""
    paths = [str(p) for p in (project_templates, TEMPLATES_DIR) if p is not None and p.is_dir()]
    files = tuple(sorted((f.name, f.stat().st_mtime_ns) for f in project_templates.iterdir())) \
        if project_templates is not None and project_templates.is_dir() else ()
    key = (tuple(paths), undefined, files)
    if key not in _ENVIRONMENTS:
        if len(_ENVIRONMENTS) >= KEPT_ENVIRONMENTS:
            _ENVIRONMENTS.pop(next(iter(_ENVIRONMENTS)))
        _ENVIRONMENTS[key] = _environment(paths, undefined)
    return _ENVIRONMENTS[key]


class _Loader(jinja2.FileSystemLoader):
    """Templates read as every project file is (files.read_text): a project's template
    that is a link out of the project is refused, its target never opened."""

    def get_source(self, environment: jinja2.Environment,
                   template: str) -> tuple[str, str, Callable[[], bool]]:
        pieces = split_template_path(template)
        for folder in self.searchpath:
            path = os.path.join(folder, *pieces)
            if os.path.isfile(path):
                text, mtime = read_text(Path(path)), os.path.getmtime(path)

                def uptodate(path: str = path, mtime: float = mtime) -> bool:
                    try:
                        return os.path.getmtime(path) == mtime
                    except OSError:
                        return False

                return text, os.path.normpath(path), uptodate
        raise jinja2.TemplateNotFound(template)


def _environment(paths: list[str], undefined: type) -> SandboxedEnvironment:
    env = BoundedEnvironment(loader=_Loader(paths), autoescape=False,
                             undefined=undefined, keep_trailing_newline=False,
                             trim_blocks=True, lstrip_blocks=True)
    env.globals["range"] = _small_range
    return env


def _small_range(*args: int) -> range:
    r = range(*args)
    if len(r) > MAX_ITEMS:
        raise SecurityError(f"range of {len(r):,} items is too large for a template "
                            f"(at most {MAX_ITEMS:,})")
    return r


def _render(template: jinja2.Template, variables: dict[str, Any],
            clock: Callable[[], float]) -> tuple[str, str]:
    """(user text, system text) of `template`, stopped past MAX_OUTPUT or MAX_SECONDS."""
    context = template.new_context(variables)
    pieces, size, deadline = [], 0, clock() + MAX_SECONDS
    for piece in template.root_render_func(context):
        pieces.append(piece)
        size += len(piece)
        if size > MAX_OUTPUT:
            raise SecurityError(f"the template rendered more than {MAX_OUTPUT:,} characters")
        if clock() > deadline:
            raise SecurityError(f"the template took more than {MAX_SECONDS:.0f}s to render")
    system = context.get_exported().get("system", "")
    return "".join(pieces), str(system or "")


def render_messages(template_name: str, variables: dict[str, Any],
                    project_templates: Path | None = None, *,
                    clock: Callable[[], float] = time.monotonic,
                    undefined: type = jinja2.StrictUndefined) -> list[dict[str, str]]:
    """Render a template into chat messages: [system?, user]. A template error, or one
    that renders too much or too long, is a ConfigError naming the template."""
    env = environment(project_templates, undefined=undefined)
    template = None
    try:
        template = env.get_template(template_name)
        user, system = _render(template, variables, clock)
    except jinja2.TemplateSyntaxError as exc:
        raise ConfigError(f"template error: {exc.message}", file=exc.filename or template_name,
                          line=exc.lineno) from None
    except (jinja2.TemplateError, ArithmeticError, MemoryError, RecursionError, TypeError,
            ValueError, LookupError, AttributeError) as exc:    # the template's own doing
        where = _where(template_name, project_templates)
        raise ConfigError(f"template error: {exc}; fix the template", file=where,
                          line=_line_in(exc, template)) from None
    user, system = user.strip(), system.strip()
    messages = []
    if system:
        messages.append({"role": "system", "content": system})
    messages.append({"role": "user", "content": user})
    return messages


def render_stage(context: Context, project_templates: Path | None = None,
                 **extra: Any) -> list[dict[str, str]]:
    """Render a stage's template with its context's sections and values."""
    variables = {"sections": context.nonempty(), "context": context, **context.values, **extra}
    return render_messages(template_of(context.stage), variables, project_templates)


def template_of(stage: str) -> str:
    """The template of a declared stage (config/stages.py: its `template`)."""
    found = spec(stage)
    if found is None or not found.template:
        raise ConfigError(f"the stage {stage!r} has no template declared (config/stages.py)",
                          key=stage)
    return found.template


def _line_in(exc: BaseException, template: jinja2.Template | None) -> int | None:
    """The line of `template` a render error was raised at (None if not inside it)."""
    line, tb = None, exc.__traceback__
    while tb is not None and template is not None:
        if tb.tb_frame.f_code.co_filename == template.filename:
            line = template.get_corresponding_lineno(tb.tb_lineno)
        tb = tb.tb_next
    return line


def _where(template_name: str, project_templates: Path | None) -> str:
    own = project_templates / template_name if project_templates else None
    return str(own) if own is not None and own.is_file() else template_name


# What each stage's template is given, in shapes the real data has: the values of every
# variant a stage renders, and sections of every kind (sample text).
SAMPLE_VALUES: dict[str, list[dict[str, Any]]] = {
    "planner": [{"tick": 1, "max_tools": 3, "first_scene": True, "lean": False,
                 "anyone_gone": False},
                {"tick": 12, "max_tools": 3, "first_scene": False, "lean": False,
                 "anyone_gone": True},
                {"tick": 12, "max_tools": 1, "first_scene": False, "lean": True,
                 "anyone_gone": False},
                {"tick": 12, "max_tools": 3, "first_scene": False, "lean": False,
                 "anyone_gone": False, "beats": ["3.1", "3.2"]},
                {"tick": 12, "max_tools": 3, "first_scene": False, "lean": False,
                 "anyone_gone": False, "beats": ["6.2"], "finale": "She lights the lamp."}],
    "writer": [{"tick": 12, "min_words": 200, "max_words": 400, "title": "The Drawn Door",
                "goes_on": goes_on} for goes_on in (False, True)]
    + [{"tick": 12, "min_words": 200, "max_words": 400, "title": "The Drawn Door",
        "goes_on": True, "beat": "She opens the door.", "finale": "She lights the lamp."}],
    "extractor": [{"tick": 12, "knowledge": True}, {"tick": 12, "knowledge": False},
                  {"tick": 12, "knowledge": True, "beat": "3.1", "tension": True},
                  {"tick": 12, "knowledge": False, "voices": ["Mara Quill"]}],
    "summarizer": [{"first": 1, "last": 10, "kind": kind} for kind in
                   ("checkpoint", "arc", "overall")]
    + [{"first": 1, "last": 10, "kind": "checkpoint", "continuing": True}],
    "auditor": [{"tick": 12}],
    "outline": [{"level": "arc"}, {"level": "acts", "count": 3},
                {"level": "chapters", "count": 2, "numbers": [5, 6], "numbers_text": "5 and 6",
                 "act": 2, "act_name": "Deeper Water", "act_summary": "The search.",
                 "total": 6, "ending": "She lights the lamp.", "rewrite": True},
                {"level": "beats", "count": 2, "chapter": 5, "title": "The Salt Map",
                 "purpose": "To turn it.", "tension": 7, "kept": "5.1 She reads it.",
                 "total": 6, "ending": "She lights the lamp."}],
}
SAMPLE_SECTIONS = {"planner": PLANNER_LAYOUT, "writer": WRITER_ORDER,
                   "extractor": EXTRACTOR_LAYOUT,
                   "summarizer": SUMMARIZER_LAYOUT + ("draft", "missing"),
                   "auditor": AUDITOR_LAYOUT, "outline": OUTLINE_LAYOUT}
SAMPLE_TEXT = ("Mara Quill turned the drowned man's map toward the light.\n"
               "- She found a door she had never seen.")


def sample_context(stage: str, values: dict[str, Any]) -> Context:
    """A context of `stage` holding every kind of section it can have, with sample text."""
    sections = tuple(Section(name, name.replace("_", " ").title(), SAMPLE_TEXT,
                             pinned=name in ("bible", "steer", "intention", "tools", "scene",
                                             "outline", "beat"),
                             items=(f"{name}_1",))
                     for name in SAMPLE_SECTIONS[stage])
    return Context(stage, sections, dict(values))


def check_templates(project_templates: Path | None) -> None:
    """Render every stage's template with sample data of the real shapes (every section,
    every value, each variant), strict about missing values as a real render is, so a
    broken project template, or one that fails only on data (`sections[99].text`, a
    filter on a value no stage gives), stops the tick before the first model call."""
    if project_templates is None or not project_templates.is_dir():
        return
    for stage, variants in SAMPLE_VALUES.items():
        for values in variants:
            render_stage(sample_context(stage, values), project_templates)
