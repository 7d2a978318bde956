"""Game and puzzle domains, every answer checked by the game's rules or by simulation.

Modules: ``board`` (tic-tac-toe, connect four, nim), ``strategy`` (reversi, pure Nash
equilibria, mastermind), ``state_puzzles`` (Hanoi, sliding tiles, water jugs, missionaries
and cannibals), ``grid_paths`` (maze, knight's tour), ``puzzles`` (sudoku, n-queens, lights
out), ``numbers`` (24 game, game of life); ``_kit`` holds the shared move-list replay and
shortest-plan search.
"""

from . import board, grid_paths, numbers, puzzles, state_puzzles, strategy  # noqa: F401  (registration side effects)
