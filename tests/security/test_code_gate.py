"""The code domains' static gate against a table of real bypasses (each one works in this
Python if the gate lets it through), and against ordinary programs it must keep accepting."""

import statistics
import types

import pytest

from posttrain.verifiers.code_gate import ALLOWED_MODULES, static_check

OK = "def f(x):\n    return x\n"

# (name, program): every program must be refused. Each reaches os, sys, builtins, a frame, a
# namespace dict or an evaluator through something other than a plain forbidden import.
BYPASSES = [
    ("statistics.random._os.system", "import statistics\nstatistics.random._os.system('id')\n"),
    ("statistics.random", "import statistics\nr = statistics.random.random()\n"),
    ("random._os (unimported)", "y = random._os\n"),
    ("from statistics import random", "from statistics import random\nrandom._os.system('id')\n"),
    ("statistics.sys.modules", "import statistics\nos = statistics.sys.modules['os']\n"),
    ("dataclasses.builtins.eval", "import dataclasses\ndataclasses.builtins.eval('1')\n"),
    ("dataclasses.sys", "import dataclasses\ndataclasses.sys.modules['os'].system('id')\n"),
    ("dataclasses.inspect", "import dataclasses\ndataclasses.inspect.os.system('id')\n"),
    ("from dataclasses import sys", "from dataclasses import sys\n"),
    ("from dataclasses import builtins", "from dataclasses import builtins as b\nb.open('x')\n"),
    ("fractions.sys", "import fractions\nfractions.sys.modules['os']\n"),
    ("fractions.numbers", "import fractions\nfractions.numbers\n"),
    ("typing.sys", "import typing\ntyping.sys.modules['os']\n"),
    ("typing.types", "import typing\ntyping.types.FunctionType\n"),
    ("typing.contextlib", "import typing\ntyping.contextlib.sys\n"),
    ("json.codecs.sys", "import json\njson.codecs.sys.modules['os']\n"),
    ("json.codecs.builtins", "import json\njson.codecs.builtins.open('x')\n"),
    ("from json import codecs", "from json import codecs\n"),
    ("re.enum.sys", "import re\nre.enum.sys.modules\n"),
    ("re.copyreg", "import re\nre.copyreg\n"),
    ("json.decoder.scanner.re.enum", "import json.decoder\njson.decoder.scanner.re.enum.sys\n"),
    ("collections._sys", "import collections\ncollections._sys.modules['os']\n"),
    ("string._re", "import string\nstring._re\n"),
    ("re._compiler", "import re\nre._compiler\n"),
    ("module stored in a name", "import statistics\nm = statistics\nm.random._os\n"),
    ("module as a default", "import statistics\ndef g(m=statistics):\n    return m.random\n"),
    ("module in a list", "import statistics\n[statistics][0].random.random()\n"),
    ("module by walrus", "import statistics\n(s := statistics)\n"),
    ("module rebound", "import math\nfor math in [1]:\n    pass\n"),
    ("module shadowed by def", "import math\ndef math():\n    pass\n"),
    ("import sys", "import sys\nsys.modules['os']\n"),
    ("import importlib", "import importlib\nimportlib.import_module('os')\n"),
    ("from importlib", "from importlib import import_module\n"),
    ("import random", "import random\n"),
    ("import json.tool", "import json.tool\n"),
    ("relative import", "from . import x\n"),
    ("star import", "from statistics import *\n"),
    ("__import__", "__import__('os').system('id')\n"),
    ("__builtins__", "__builtins__['__import__']('os')\n"),
    ("getattr computed", "import statistics\ngetattr(statistics, 'ran' + 'dom')\n"),
    ("vars()", "x = vars()\n"),
    ("globals()", "x = globals()['__builtins__']\n"),
    ("locals()", "x = locals()\n"),
    ("eval", "eval('1')\n"),
    ("exec", "exec('import os')\n"),
    ("compile", "compile('1', 'a', 'eval')\n"),
    ("open", "open('/etc/passwd')\n"),
    ("function __globals__", "g = f.__globals__['__builtins__']\n"),
    ("__class__ walk", "x = ().__class__.__base__.__subclasses__()\n"),
    ("generator frame builtins", "b = (i for i in [1]).gi_frame.f_builtins['__import__']\n"),
    ("generator frame back", "g = (i for i in [1])\nb = g.gi_frame.f_back.f_globals\n"),
    ("traceback frame", "try:\n    1 / 0\nexcept Exception as e:\n    t = e.with_traceback(None)\n"
                        "    t = t.tb_frame\n"),
    ("operator.attrgetter", "import operator\noperator.attrgetter('__globals__')(f)\n"),
    ("from operator import attrgetter", "from operator import attrgetter as a\n"),
    ("operator.methodcaller", "import operator\noperator.methodcaller('__reduce_ex__', 2)(f)\n"),
    ("attrgetter via fractions.operator", "import fractions\nfractions.operator.attrgetter('x')\n"),
    ("attrgetter via typing.operator", "import typing\ntyping.operator.attrgetter('x')\n"),
    ("string.Formatter.get_field", "import string\nstring.Formatter().get_field('0.x', [f], {})\n"),
    ("typing.get_type_hints eval", "import typing\ndef g(a: 'exec(\"1\")'):\n    pass\n"
                                   "typing.get_type_hints(g)\n"),
    ("typing.ForwardRef", "import typing\ntyping.ForwardRef('x')\n"),
    ("functools.singledispatch", "import functools\n@functools.singledispatch\ndef g(a):\n"
                                 "    pass\n"),
    ("singledispatch via dataclasses.functools",
     "import dataclasses\ndataclasses.functools.singledispatch\n"),
    ("private attribute on an object", "import statistics\nd = statistics.NormalDist()\nd._mu\n"),
    ("private attribute on a class", "import collections\ncollections.OrderedDict._x\n"),
    ("private attribute via a name 'self'", "import statistics\nself = statistics.NormalDist()\n"
                                             "m = self._mu\n"),
    ("private attribute via a loop 'self'", "for self in [1]:\n    self._x\n"),
    ("format field dunder", "s = '{0.__globals__}'.format(f)\n"),
    ("format field private", "s = '{0._os}'.format(1)\n"),
    ("missing module attribute", "import math\nmath.nothing_here\n"),
]


@pytest.mark.parametrize("name,prog", BYPASSES, ids=[b[0] for b in BYPASSES])
def test_bypass_is_refused(name, prog):
    assert static_check(OK + prog, "f") is not None, name


def test_the_table_names_real_paths():
    # The module-attribute rows are live in this Python: the gate is not refusing fiction.
    import dataclasses
    import json

    assert isinstance(statistics.random, types.ModuleType)
    assert statistics.random._os.system is not None
    assert dataclasses.builtins.eval is eval
    assert json.codecs.sys.modules is not None
    assert len(BYPASSES) >= 60


ACCEPTED = [
    "import math\ndef f(x):\n    return math.sqrt(x) + math.pi\n",
    "from collections import Counter, defaultdict\ndef f(x):\n    return Counter(x).most_common(1)\n",
    "import collections.abc\ndef f(x):\n    return isinstance(x, collections.abc.Mapping)\n",
    "from collections import abc\ndef f(x):\n    return isinstance(x, abc.Sequence)\n",
    "import json\ndef f(x):\n    try:\n        return json.loads(x)\n    except json.JSONDecodeError:\n"
    "        return None\n",
    "from json import decoder\ndef f(x):\n    return decoder.JSONDecodeError\n",
    "import dataclasses\n@dataclasses.dataclass(frozen=True)\nclass P:\n    x: int = 0\n"
    "def f(x):\n    return dataclasses.replace(P(), x=x)\n",
    "from typing import Optional, List\ndef f(x: Optional[List[int]]) -> 'int':\n    return 0\n",
    "import functools\n@functools.lru_cache(maxsize=None)\ndef f(x):\n    return x\n",
    "import statistics\ndef f(x):\n    return statistics.mean(x)\n",
    "import fractions\ndef f(x):\n    return fractions.Fraction(x).limit_denominator(10)\n",
    "import re\ndef f(x):\n    return re.sub(r'\\s+', ' ', x).strip()\n",
    "import string\ndef f(x):\n    return x.strip(string.punctuation)\n",
    "import operator\nfrom functools import reduce\ndef f(x):\n    return reduce(operator.mul, x, 1)\n",
    "class S:\n    def __init__(self):\n        self._items = []\n    def push(self, v):\n"
    "        self._items.append(v)\ndef f(x):\n    return '{0}:{1:>4}'.format(x, 1)\n",
    "import heapq, bisect, itertools\ndef f(x):\n    return heapq.nsmallest(1, x), "
    "bisect.bisect(x, 0), list(itertools.pairwise(x))\n",
    "def f(x):\n    return x\nif __name__ == '__main__':\n    print(f(1))\n",
]


@pytest.mark.parametrize("prog", ACCEPTED)
def test_ordinary_programs_pass(prog):
    assert static_check(prog, "f") is None


def test_every_allowed_module_is_importable_and_walkable():
    import importlib

    for name in ALLOWED_MODULES:
        mod = importlib.import_module(name)
        assert static_check(f"import {name}\n" + OK, "f") is None, name
        assert isinstance(mod, types.ModuleType)
