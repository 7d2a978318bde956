"""The domain kits: one way to write a domain per environment kind (DESIGN.md §8, docs/domains.md).

A domain is a record of functions, composed rather than subclassed:

- single-turn: :class:`posttrain.domains.kit.single_turn.SingleTurnDomain` (a generator that
  returns a :class:`~posttrain.domains.kit.single_turn.Draft`, a checker, the exploit answers);
- tool (a simulated API): :class:`posttrain.domains.tools._kit.ApiDomain`;
- sandbox (a file tree worked on with a shell): :class:`posttrain.domains.terminal._kit.TreeDomain`.

A family kit adds functions (scorers, prompt pieces, a constructor that fills the family's
shared checker) over these records; it never adds a base class with hooks. The submodules are
imported by name (``from posttrain.domains.kit.single_turn import ...``) so that importing the
kit never imports a family.
"""
