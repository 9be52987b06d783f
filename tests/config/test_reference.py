"""The configuration reference (docs/reference/configuration.md, made when the site is
built from config/reference.py): every key, its type, default, presets and meaning; and
no page of the docs names a key that does not exist."""

from __future__ import annotations

import re

from pydantic import BaseModel

from novel_agent.config.layers import load_config
from novel_agent.config.reference import keys, markdown, preset_values
from novel_agent.config.settings import SECTIONS, StageOverrides
from tests.support.repo import DOCS, README, hooks, page


def every_key() -> list[str]:
    """Every dotted key the declarations hold; a mapping declared as a model, its keys too."""
    out = []
    for section, model in SECTIONS.items():
        for key, info in model.model_fields.items():
            out.append(f"{section}.{key}")
            if isinstance(info.annotation, type) and issubclass(info.annotation, BaseModel):
                out += [f"{section}.{key}.{sub}" for sub in info.annotation.model_fields]
            if key == "stages":     # a stage's own keys (the others are llm's)
                out += [f"llm.stages.<stage>.{sub}" for sub in StageOverrides.model_fields
                        if sub not in model.model_fields]
    return out


def test_every_key_has_a_row_with_its_type_default_and_meaning():
    text = markdown()
    rows = {m.group(1): m.group(0) for m in re.finditer(r"^\| `([a-z_.0-9<>]+)` \|.*$", text,
                                                         re.M)}
    assert list(rows) == every_key()
    for key in keys():
        assert key.meaning, f"{key.name}: no description in config/settings.py"
        assert f"| `{key.type}` |" in rows[key.name]
    defaults = load_config()
    assert "| `generation.scene_max_words` | `int > 0` | `" + \
        str(defaults.generation.scene_max_words) + "` |" in text


def test_the_presets_columns_are_the_presets_files():
    presets = preset_values()
    assert presets["balanced"] and presets["aggressive"]
    by_name = {k.name: k for k in keys()}
    for preset, values in presets.items():
        for name, value in values.items():
            assert by_name[name].presets[preset] == value


def test_the_page_gets_the_reference_when_the_site_is_built():
    source = page("reference/configuration.md")
    assert "<!-- configuration-reference -->" in source
    built = hooks().on_page_markdown(source)
    assert "<!--" not in built.split("## `llm`")[1]
    assert all(f"| `{name}` |" in built for name in every_key())


def test_no_page_names_a_key_that_does_not_exist():
    """A documented key that nothing reads is a defect: every `section.key` a page or the
    README writes in code is a real key (or a whole section, or a key inside a mapping)."""
    known = set(every_key())
    pattern = re.compile(rf"`(?:{'|'.join(SECTIONS)})\.([a-z_0-9]+)")
    named = {}
    for path in [README, *sorted(DOCS.rglob("*.md"))]:
        for match in pattern.finditer(path.read_text(encoding="utf-8")):
            name = match.group(0)[1:]
            named.setdefault(name, path.name)
    files = ("j2", "yaml", "md", "py", "jsonl", "log", "db", "png")   # audit.j2 is a template
    unknown = {n: where for n, where in named.items()
               if n not in known and n.rsplit(".", 1)[1] not in files}
    assert len(named) > 30 and unknown == {}
