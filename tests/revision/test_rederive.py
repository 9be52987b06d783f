"""Memory is a function of the scenes' recorded plans and extractions
(novel_agent.revision.rederive): replaying the records gives the memory the ticks wrote."""

from __future__ import annotations

from novel_agent.books.importer import import_manuscript
from novel_agent.books.split import load_manuscript
from novel_agent.history.hooks import opened
from novel_agent.models.offline import OfflineModel
from novel_agent.revision.rederive import replay_range
from novel_agent.story.memory.files import memory_files
from novel_agent.story.memory.read import load_memory
from novel_agent.story.memory.store import Memory
from novel_agent.tick.session import Session
from tests.support.manuscripts import write_book
from tests.support.ticking import run_ticks


def files(memory, project):
    return memory_files(memory.copy(), project.memory_dir)


def test_replaying_every_record_gives_the_memory_on_disk(project):
    run_ticks(project, 15)
    derived = replay_range(project, Memory(), 1, 15, project.config())
    assert files(derived, project) == files(load_memory(project.memory_dir), project)
    assert len(derived.facts) > 5 and derived.relationships


def test_replaying_imported_pieces_and_ticks(project, tmp_path):
    book = load_manuscript(write_book(tmp_path / "book.md", chapters=1), "auto", 400)
    with opened(project), Session.open(project, project.config(),
                               make_model=lambda: OfflineModel(seed=1)) as s:
        import_manuscript(s, book)
    run_ticks(project, 3)
    derived = replay_range(project, Memory(), 1, 6, project.config())
    on_disk = load_memory(project.memory_dir)
    assert files(derived, project) == files(on_disk, project)
    assert on_disk.characters
