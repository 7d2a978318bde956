"""Game and puzzle domains, every answer checked by the game's rules or by simulation.

Modules: ``board`` (tic-tac-toe, connect four, nim), ``strategy`` (reversi, pure Nash
equilibria, mastermind), ``plans`` (Hanoi, maze) and ``plans2`` (sliding tiles, water jugs,
missionaries and cannibals, knight's tour), ``puzzles`` (sudoku, n-queens, lights out),
``numbers`` (24 game, game of life).
"""

from . import board, numbers, plans, plans2, puzzles, strategy  # noqa: F401  (registration side effects)
