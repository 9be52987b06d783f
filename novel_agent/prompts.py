"""Prompts: sandboxed Jinja2 templates, one per stage, overridable per project.

A template renders the user message; a `{% set system %}...{% endset %}` block
in it is the system message. A project overrides a template by putting a file of
the same name in its `templates/` folder.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Callable

import jinja2
from jinja2.exceptions import SecurityError
from jinja2.sandbox import SandboxedEnvironment

from .context import Context
from .errors import ConfigError
from .paths import TEMPLATES_DIR

STAGE_TEMPLATES = {"planner": "plan.j2", "writer": "write.j2", "extractor": "extract.j2",
                   "summarizer": "summarize.j2"}


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


def environment(project_templates: Path | None = None, *,
                undefined: type = jinja2.StrictUndefined) -> SandboxedEnvironment:
    """A sandboxed environment that looks in the project's templates first."""
    paths = [str(p) for p in (project_templates, TEMPLATES_DIR) if p is not None and p.is_dir()]
    env = BoundedEnvironment(loader=jinja2.FileSystemLoader(paths), autoescape=False,
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
    try:
        template = env.get_template(template_name)
        user, system = _render(template, variables, clock)
    except jinja2.TemplateSyntaxError as exc:
        raise ConfigError(f"template error: {exc.message}", file=exc.filename or template_name,
                          line=exc.lineno) from None
    except (jinja2.TemplateError, ArithmeticError, MemoryError, RecursionError) as exc:
        raise ConfigError(f"template error: {exc}; fix the template",
                          file=_where(template_name, project_templates)) from None
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
    return render_messages(STAGE_TEMPLATES[context.stage], variables, project_templates)


def _where(template_name: str, project_templates: Path | None) -> str:
    own = project_templates / template_name if project_templates else None
    return str(own) if own is not None and own.is_file() else template_name


def check_templates(project_templates: Path | None) -> None:
    """Render every stage's template once with no data (lenient about missing values), so
    a broken project template stops the tick before the first model call is paid for."""
    if project_templates is None or not project_templates.is_dir():
        return
    for name in STAGE_TEMPLATES.values():
        render_messages(name, {}, project_templates, undefined=jinja2.ChainableUndefined)
