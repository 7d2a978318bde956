"""The real tier's repositories: pinned sdists of small pure-Python packages with their own
test suites, turned into sandbox images, bug-injected by AST mutation and validated against
the packages' own tests (SWE-smith's rule: a task is kept only when its bug makes tests fail
that pass without it).

Modules: :mod:`.fetch` (manifest, cache, sha256), :mod:`.image` (the install step done once:
a template per package), :mod:`.mutate` (libcst operators), :mod:`.validate` (runs the suites
in the isolated sandbox), :mod:`.pool` (builds ``pool.json``, the validated task set the
domains draw from), :mod:`.grade` (scores a submitted tree). Nothing here downloads at task
time; see docs/domains.md, "Real tier: repositories".
"""
