"""The stages of a tick, a module each: plan (and its tools), write (and the sentence
mend), extract, audit, commit, summarize, the outline and its revision, the book's names."""
