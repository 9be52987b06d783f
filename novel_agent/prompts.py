"""Prompts: sandboxed Jinja2 templates, one per stage, overridable per project.

A template renders the user message; a `{% set system %}...{% endset %}` block
in it is the system message. A project overrides a template by putting a file of
the same name in its `templates/` folder.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jinja2
from jinja2.sandbox import SandboxedEnvironment

from .context import Context
from .errors import ConfigError
from .paths import TEMPLATES_DIR

STAGE_TEMPLATES = {"planner": "plan.j2", "writer": "write.j2", "extractor": "extract.j2",
                   "summarizer": "summarize.j2"}


def environment(project_templates: Path | None = None) -> SandboxedEnvironment:
    """A sandboxed environment that looks in the project's templates first."""
    paths = [str(p) for p in (project_templates, TEMPLATES_DIR) if p is not None and p.is_dir()]
    return SandboxedEnvironment(loader=jinja2.FileSystemLoader(paths), autoescape=False,
                                undefined=jinja2.StrictUndefined, keep_trailing_newline=False,
                                trim_blocks=True, lstrip_blocks=True)


def render_messages(template_name: str, variables: dict[str, Any],
                    project_templates: Path | None = None) -> list[dict[str, str]]:
    """Render a template into chat messages: [system?, user]."""
    env = environment(project_templates)
    try:
        template = env.get_template(template_name)
        module = template.make_module(variables)
    except jinja2.TemplateSyntaxError as exc:
        raise ConfigError(f"template error: {exc.message}", file=exc.filename or template_name,
                          line=exc.lineno) from None
    except jinja2.TemplateError as exc:
        raise ConfigError(f"template error: {exc}", file=template_name) from None
    user = str(module).strip()
    system = str(getattr(module, "system", "") or "").strip()
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
