"""The story on disk, by concern: memory/ (what the scenes established), outline/ (what is
meant to be written, and where the book stands against it), project/ (the folder, its
lock, the journal, recovery). Beside them, what belongs to none of the three: the scenes,
the summary tree and its faithfulness, the planner's and extractor's decisions, the
lorebook, the steer note, the style and the pool of names. Imports config/ and text/.
"""
