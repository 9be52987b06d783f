"""The `novel` group; each command lives in a module named for what it does."""

from __future__ import annotations

import click

from novel_agent import __version__
from novel_agent.cli.audit_cmd import audit_cmd
from novel_agent.cli.branch_cmd import branch_group
from novel_agent.cli.config_cmd import config_group
from novel_agent.cli.context_cmd import context_cmd
from novel_agent.cli.doctor_cmd import doctor_cmd
from novel_agent.cli.export_cmd import export_cmd
from novel_agent.cli.fleet_cmd import fleet_group
from novel_agent.cli.history_cmd import diff_cmd, log_cmd
from novel_agent.cli.import_cmd import import_cmd
from novel_agent.cli.inspect_cmd import inspect_cmd
from novel_agent.cli.lore_cmd import lore_group
from novel_agent.cli.models_cmd import models_group
from novel_agent.cli.new import new_cmd
from novel_agent.cli.outline_cmd import outline_group
from novel_agent.cli.preset_cmd import preset_group
from novel_agent.cli.reindex_cmd import reindex_cmd
from novel_agent.cli.revise_cmd import revise_cmd
from novel_agent.cli.rewind_cmd import redo_cmd, rewind_cmd
from novel_agent.cli.run_cmd import run_cmd
from novel_agent.cli.scenes_cmd import scenes_group
from novel_agent.cli.search_cmd import search_cmd
from novel_agent.cli.serve_cmd import serve_cmd
from novel_agent.cli.stats_cmd import stats_cmd
from novel_agent.cli.status_cmd import status_cmd
from novel_agent.cli.stop_cmd import stop_cmd
from novel_agent.cli.style_cmd import style_group
from novel_agent.cli.summarize import summarize_cmd
from novel_agent.cli.tick import tick_cmd
from novel_agent.cli.usage_cmd import usage_cmd
from novel_agent.cli.worker_cmd import worker_cmd


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="novel")
def cli() -> None:
    """novel_agent: a story daemon that writes a novel one scene per tick.

    \b
    Start here:
      novel new harbour --premise "A lighthouse keeper finds a drowned man's map."
      novel tick -n 3
      novel status
    """


cli.add_command(new_cmd)
cli.add_command(outline_group)
cli.add_command(tick_cmd)
cli.add_command(run_cmd)
cli.add_command(stop_cmd)
cli.add_command(status_cmd)
cli.add_command(scenes_group)
cli.add_command(inspect_cmd)
cli.add_command(context_cmd)
cli.add_command(summarize_cmd)
cli.add_command(models_group)
cli.add_command(export_cmd)
cli.add_command(preset_group)
cli.add_command(config_group)
cli.add_command(import_cmd)
cli.add_command(usage_cmd)
cli.add_command(stats_cmd)
cli.add_command(doctor_cmd)
cli.add_command(search_cmd)
cli.add_command(lore_group)
cli.add_command(style_group)
cli.add_command(reindex_cmd)
cli.add_command(serve_cmd)
cli.add_command(fleet_group)
cli.add_command(worker_cmd)
cli.add_command(log_cmd)
cli.add_command(diff_cmd)
cli.add_command(rewind_cmd)
cli.add_command(redo_cmd)
cli.add_command(branch_group)
cli.add_command(revise_cmd)
cli.add_command(audit_cmd)
